package regression

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// serverRun is a run of two requests whose server section has a vLLM
// target at url that finished requests requests with prefix-cache hits
// of its 2000 prompt tokens looked up, its other figures changed by
// change, and a DCGM exporter.
func serverRun(t *testing.T, url string, requests, hits float64, change func(map[string]summary.WindowFigure)) *summary.Summary {
	s := summarytest.Build(t, 10*time.Second, summarytest.Streamed(50, 10), summarytest.Streamed(60, 10))
	vllm := summarytest.VLLMTarget(requests, 5000)
	vllm.URL = url
	vllm.Figures[string(engines.PrefixCacheHits)] = summarytest.Counter("tokens", hits)
	if change != nil {
		change(vllm.Figures)
	}
	summarize.AttachServer(s, []summary.ServerTarget{vllm, summarytest.DCGMTarget()})
	return s
}

// TestServerFiguresJudged compares the server figures of two result
// files: which get a verdict, which too few samples leave inconclusive,
// which are shown without one, and how targets pair.
func TestServerFiguresJudged(t *testing.T) {
	const url = "http://gpu-1:8000/metrics"
	slower := func(fs map[string]summary.WindowFigure) {
		fs[string(engines.QueueTime)] = summarytest.Histogram(0.02, 0.1, 0.3)
		fs[string(engines.KVCacheUsage)] = summarytest.Gauge("fraction", 0.8, 0.99)
		fs[string(engines.Preemptions)] = summarytest.Counter("requests", 40)
	}
	manyObserved := func(fs map[string]summary.WindowFigure) {
		h := summarytest.Histogram(0.02, 0.1, 0.3)
		h.Count = summarytest.Num(1000)
		fs[string(engines.QueueTime)] = h
	}
	firstBucket := func(fs map[string]summary.WindowFigure) {
		h := summarytest.FirstBucket(0.1)
		h.Count = summarytest.Num(1000)
		for i := range h.Buckets {
			h.Buckets[i].Count = 1000
		}
		fs[string(engines.QueueTime)] = h
	}
	tests := []struct {
		name      string
		base, cur *summary.Summary
		want      map[string]Verdict
		reason    map[string]string
	}{
		{"the hit rate falls over 1000 requests", serverRun(t, url, 1000, 500, nil), serverRun(t, url, 1000, 100, slower),
			map[string]Verdict{
				"server_prefix_cache_hit_rate": Regression, "server_queue_time_p99": Inconclusive, "server_queue_time_p50": NotJudged,
				"server_kv_cache_usage_max": NotJudged, "server_preemptions": NoHistory, "gpu_power_mean": NotJudged, "gpu_energy_per_token": NotJudged,
			},
			map[string]string{
				"server_queue_time_p99":     "too few samples: 100 requests cannot bound a p99 at 99 % confidence: it takes 528",
				"server_kv_cache_usage_max": "a maximum has no confidence interval",
			}},
		{"the same hit rate over 20 requests is within the noise", serverRun(t, url, 20, 500, nil), serverRun(t, url, 20, 400, nil),
			map[string]Verdict{"server_prefix_cache_hit_rate": Inconclusive}, nil},
		{"enough observations, no buckets", serverRun(t, url, 1000, 500, manyObserved), serverRun(t, url, 1000, 500, manyObserved),
			map[string]Verdict{"server_queue_time_p99": NotJudged, "server_prefix_cache_hit_rate": Unchanged},
			map[string]string{"server_queue_time_p99": "the server's histogram gives its p99, not the buckets around it that would bound it"}},
		{"a p99 known only to the first bucket: its bound, not the interpolation, and no verdict", serverRun(t, url, 1000, 500, manyObserved), serverRun(t, url, 1000, 500, firstBucket),
			map[string]Verdict{"server_queue_time_p99": NotJudged},
			map[string]string{"server_queue_time_p99": "the server's p99 is known only to its histogram bucket: ≤ 10.000 ms (the bucket and the bound its mean gives), so its change is no measurement"}},
		{"another host pairs by kind and engine", serverRun(t, "http://gpu-9:8000/metrics", 1000, 500, nil), serverRun(t, url, 1000, 100, nil),
			map[string]Verdict{"server_prefix_cache_hit_rate": Regression}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shown, curEst, baseEst := ServerFigures(tt.cur, tt.base, ServerHeadline(), DefaultConfidence)
			runs := []Run{FromSummary(tt.cur, DefaultConfidence), FromSummary(tt.base, DefaultConfidence)}
			maps.Copy(runs[0].Figures, curEst)
			maps.Copy(runs[1].Figures, baseEst)
			got := map[string]Comparison{}
			for _, c := range Compare(runs, shown, Options{Tolerance: 0.1}) {
				got[c.Figure.Name] = c
			}
			for name, want := range tt.want {
				c, ok := got[name]
				if !ok || c.Verdict != want {
					t.Errorf("%s: verdict %q (%s), want %q", name, c.Verdict, c.Reason, want)
				}
			}
			for name, want := range tt.reason {
				if c := got[name]; c.Reason != want {
					t.Errorf("%s: reason %q, want %q", name, c.Reason, want)
				}
			}
		})
	}
}

// TestServerFiguresNeedBothSections: a run without a server section adds
// no figure, and two targets of a kind are named by URL.
func TestServerFiguresNeedBothSections(t *testing.T) {
	plain := summarytest.Build(t, 10*time.Second, summarytest.Streamed(50, 10))
	withServer := serverRun(t, "http://gpu-1:8000/metrics", 1000, 500, nil)
	if shown, _, _ := ServerFigures(withServer, plain, ServerHeadline(), DefaultConfidence); len(shown) != 0 {
		t.Errorf("against a run without a server section: %v, want no figure", shown)
	}
	two := serverRun(t, "http://gpu-1:8000/metrics", 1000, 500, nil)
	second := summarytest.VLLMTarget(1000, 5000)
	second.URL = "http://gpu-2:8000/metrics"
	summarize.AttachServer(two, append(two.Server.Targets, second))
	shown, _, _ := ServerFigures(two, two, []Figure{{"server_queue_time_p99", "ms", LowerIsBetter}}, DefaultConfidence)
	var names []string
	for _, f := range shown {
		names = append(names, f.Name)
	}
	if want := "server_queue_time_p99@http://gpu-1:8000/metrics server_queue_time_p99@http://gpu-2:8000/metrics"; strings.Join(names, " ") != want {
		t.Errorf("figures %q, want %q", names, want)
	}
}

// Trend's runs: the newest run's targets pair with each previous run's;
// a previous run without a server section has none of its figures, and a
// newest run without one shows none.
func TestAddServerFiguresOfSeveralRuns(t *testing.T) {
	const url = "http://gpu-1:8000/metrics"
	side := func(hits float64) ServerSide { return SideOf(serverRun(t, url, 1000, hits, nil)) }
	figures := []Figure{{"server_prefix_cache_hit_rate", "%", HigherIsBetter}}
	tests := []struct {
		name  string
		sides []ServerSide
		shown int
		has   []bool
	}{
		{"a previous run without a section", []ServerSide{side(100), side(500), {}, side(500)}, 1, []bool{true, true, false, true}},
		{"the newest run without a section", []ServerSide{{}, side(500), side(500)}, 0, []bool{false, false, false}},
		{"a single run", []ServerSide{side(100)}, 1, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := make([]Run, len(tt.sides))
			shown := AddServerFigures(figures, false, tt.sides, runs, DefaultConfidence)
			if len(shown) != tt.shown {
				t.Fatalf("shown %v, want %d figures", shown, tt.shown)
			}
			for i, r := range runs {
				if _, ok := r.Figures["server_prefix_cache_hit_rate"]; ok != tt.has[i] {
					t.Errorf("run %d has the hit rate: %v, want %v", i, ok, tt.has[i])
				}
			}
			if tt.shown == 0 {
				return
			}
			c := Compare(runs, shown, Options{Tolerance: 0.1})[0]
			if len(runs) == 1 {
				if c.Verdict != NoHistory {
					t.Errorf("a single run's verdict %s, want %s", c.Verdict, NoHistory)
				}
				return
			}
			if c.Verdict != Regression || c.BaselineRuns != 2 {
				t.Errorf("verdict %s over %d previous runs, want a regression over the 2 with a section", c.Verdict, c.BaselineRuns)
			}
		})
	}
}
