package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// storeRuns stores runs of testid through the InfluxDB output as llmrun
// run stores them, a day apart, the newest (index 0) an hour ago: each a
// run of two requests whose server section, when hits is not nil, has a
// vLLM target that finished 1000 requests with hits[i] of its 2000
// prompt tokens looked up found in its prefix cache, and a DCGM
// exporter.
func storeRuns(t *testing.T, ctx context.Context, srv *influxtest.Server, testid string, runs int, hits []float64) {
	t.Helper()
	cfg, err := influxdb.ParseConfig(srv.URL+"?bucket="+srv.Bucket, func(k string) string {
		return map[string]string{influxdb.TokenEnv: srv.Token}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	newest := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range runs {
		s := summarytest.Build(t, 10*time.Second, summarytest.Streamed(50, 10), summarytest.Streamed(60, 10))
		s.Meta.RunID = fmt.Sprintf("r%02d-%s-0123456789", i, testid)
		s.Meta.Start = newest.Add(-time.Duration(i) * 24 * time.Hour)
		if hits != nil {
			vllm := summarytest.VLLMTarget(1000, 5000)
			vllm.Figures[string(engines.PrefixCacheHits)] = summarytest.Counter("tokens", hits[i])
			summarize.AttachServer(s, []summary.ServerTarget{vllm, summarytest.DCGMTarget()})
		}
		o := influxdb.New(cfg)
		if err := o.Start(ctx, output.Run{ID: s.Meta.RunID, TestID: testid, Start: s.Meta.Start}); err != nil {
			t.Fatal(err)
		}
		if rep := o.Finish(ctx, s); rep.Err != "" || rep.Dropped != 0 {
			t.Fatalf("storing run %d: %+v", i, rep)
		}
	}
}

// trend reads back the server sections stored in llm_server points and
// judges their figures as compare does: the prefix-cache hit rate
// falling from 25 % to 5 % over 1000 requests regresses (exit 109), the
// figures the stored window cannot bound are shown, not judged; a
// history without server points trends exactly as it did before.
func TestTrendServerFigures(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	storeRuns(t, ctx, srv, "cached", 5, []float64{100, 500, 490, 510, 500})
	storeRuns(t, ctx, srv, "steady", 5, []float64{500, 500, 490, 510, 500})
	storeRuns(t, ctx, srv, "plain", 5, nil)
	env := map[string]string{influxdb.TokenEnv: srv.Token}
	url := srv.URL + "?bucket=" + srv.Bucket

	code, stdout, stderr := cli(t, ctx, env, "trend", "--no-color", "--influxdb", url, "--testid", "cached")
	if code != exitcode.Regression {
		t.Fatalf("trend: exit %d, want %d (a regression)\n%s\n%s", code, exitcode.Regression, stdout, stderr)
	}
	if !strings.Contains(stdout, "the server's figures, newest run first") {
		t.Errorf("trend shows no table of the server's figures\n%s", stdout)
	}
	for figure, want := range map[string]string{
		"server_prefix_cache_hit_rate": "regression", "server_kv_cache_usage_max": "not judged", "server_queue_time_p50": "not judged",
		"server_queue_time_p99": "inconclusive (too few samples)", "gpu_power_mean": "not judged", "gpu_energy_per_token": "not judged",
		"success_rate": "unchanged",
	} {
		if line := trendLine(stdout, figure); !strings.Contains(line, want) {
			t.Errorf("%s: %q, want %q\n%s", figure, line, want, stdout)
		}
	}
	if line := trendLine(stdout, "server_prefix_cache_hit_rate"); !strings.Contains(line, " 5.00 ") || !strings.Contains(line, " 25.00 ") {
		t.Errorf("the hit rate's row %q: want the newest 5.00 %% against the median 25.00 %%", line)
	}

	code, stdout, stderr = cli(t, ctx, env, "trend", "--no-color", "--influxdb", url, "--testid", "steady", "--metric", "server_prefix_cache_hit_rate,ttft_p99")
	if code != exitcode.OK || !strings.Contains(trendLine(stdout, "server_prefix_cache_hit_rate"), "unchanged") || trendLine(stdout, "server_kv_cache_usage_max") != "" {
		t.Errorf("trend --metric of a steady hit rate: exit %d, want 0 with the hit rate unchanged and no other server figure\n%s\n%s", code, stdout, stderr)
	}

	var headline []string
	for _, f := range regression.Headline() {
		headline = append(headline, f.Name)
	}
	code, plain, stderr := cli(t, ctx, env, "trend", "--no-color", "--influxdb", url, "--testid", "plain")
	_, clientOnly, _ := cli(t, ctx, env, "trend", "--no-color", "--influxdb", url, "--testid", "plain", "--metric", strings.Join(headline, ","))
	if code != exitcode.OK || plain != clientOnly || strings.Contains(plain, "server_") || strings.Contains(plain, "gpu_") {
		t.Errorf("trend of runs without server points: exit %d, want 0 and what the client's figures alone show\n%s\nwant\n%s\n%s", code, plain, clientOnly, stderr)
	}
}
