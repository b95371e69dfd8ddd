package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
)

// trendBase returns the figures of a planted run before its jitter.
func trendBase() map[string]float64 {
	return map[string]float64{
		"request_throughput": 2, "output_throughput": 500, "total_token_throughput": 1500, "success_rate": 0.95,
		"ttft_p50": 150, "ttft_p99": 400, "tpot_p50": 20, "tpot_p99": 30, "itl_p99": 35, "e2e_p99": 5000, "e2e_p50": 3000,
	}
}

// trendJitter makes the runs of a stable history differ by up to ±3 %
// (times spread); the newest run (index 0) has none, and the median of the
// 5 (or 3) runs before it is 0.
func trendJitter(run int, spread float64) float64 {
	jitter := []float64{0, 0.02, -0.03, 0, -0.01, 0.03, -0.02, 0.015}
	return spread * jitter[run%len(jitter)]
}

// trendFigures adds figures to fields, each with a ±3 % interval at 99 %
// confidence, as llmrun run stores them, unless old (a run stored before
// intervals were kept).
func trendFigures(fields map[string]any, figures map[string]float64, old bool) {
	for k, v := range figures {
		fields[k] = v
		if !old {
			fields[k+"_ci_lo"], fields[k+"_ci_hi"] = 0.97*v, 1.03*v
		}
	}
	if !old {
		fields["ci_level"] = 0.99
		for _, l := range []string{"ttft", "tpot", "itl", "e2e"} {
			fields[l+"_count"] = 1176.0
		}
	}
}

// trendHistory is one series of planted runs, newest first, a day apart.
type trendHistory struct {
	testid, model string
	runs          int
	// newest changes the figures of the newest run (nil: none).
	newest map[string]float64
	// scenarios get per-scenario points, with the whole run's figures
	// scaled; rag's changed by ragNewest in the newest run.
	scenarios []string
	ragNewest map[string]float64
	// spread scales the runs' jitter (0: 1); old runs have no intervals.
	spread float64
	old    bool
	// env is the runs' --tag env (default staging).
	env string
	// clients are the runs' client health, newest first: a limit, "ok"
	// for none, or "" (and runs beyond the list) for a point stored
	// before llmrun kept it.
	clients []string
}

// trendClient adds the client-health fields of a run's health to its
// point's fields: a limit, "ok", or "" for none.
func trendClient(fields map[string]any, client string) {
	switch client {
	case "":
	case "ok":
		fields["client_limited"] = false
	default:
		fields["client_limited"], fields["client_limit"] = true, client
	}
}

// trendPoints follows the schema of docs/influxdb.md: per run an llm_run
// point for the whole run and one per scenario, and points of the other
// measurements, with the same tags and large values, that trend ignores.
func trendPoints(h trendHistory, now time.Time) []*write.Point {
	var pts []*write.Point
	env := cmp.Or(h.env, "staging")
	for i := range h.runs {
		runID := fmt.Sprintf("%s-%s-%s-%02d-0123456789abcdef", h.testid, h.model, env, i)
		start := now.Add(-time.Duration(i) * 24 * time.Hour)
		tags := map[string]string{"run_id": runID, "testid": h.testid, "model": h.model, "env": env}
		fields := map[string]any{
			"duration_s": 600.0, "requests": int64(1200), "completed": int64(1176), "failed": int64(24), "interrupted": int64(0),
			"iterations": int64(1200), "aborted": false, "interrupted_run": false, "thresholds_failed": int64(0),
			"version": fmt.Sprintf("v0.%d.0", 9-i), "target": "http://gpu-1:8000/v1", "script": "chat.js", "seed": int64(1),
		}
		spread := h.spread
		if spread == 0 {
			spread = 1
		}
		figures := map[string]float64{}
		for k, v := range trendBase() {
			v *= 1 + trendJitter(i, spread)
			if i == 0 && h.newest[k] != 0 {
				v = h.newest[k]
			}
			figures[k] = v
		}
		trendFigures(fields, figures, h.old && i > 0)
		client := ""
		if i < len(h.clients) {
			client = h.clients[i]
		}
		trendClient(fields, client)
		pts = append(pts, influxdb2.NewPoint("llm_run", tags, fields, start))
		for j, sc := range h.scenarios {
			st := maps.Clone(tags)
			st["scenario"] = sc
			sf := map[string]any{"requests": int64(600)}
			figures := map[string]float64{}
			for k, v := range trendBase() {
				v *= (1 + trendJitter(i, spread)) * (0.5 + float64(j))
				if i == 0 && sc == "rag" && h.ragNewest[k] != 0 {
					v = h.ragNewest[k]
				}
				figures[k] = v
			}
			trendFigures(sf, figures, h.old && i > 0)
			trendClient(sf, client)
			pts = append(pts, influxdb2.NewPoint("llm_run", st, sf, start))
		}
		all := map[string]string{"run_id": runID, "testid": h.testid, "scenario": "_all", "env": env}
		pts = append(pts,
			influxdb2.NewPoint("llm_run_start", map[string]string{"run_id": runID, "testid": h.testid}, map[string]any{"max_vus": int64(16)}, start),
			influxdb2.NewPoint("llm_interval", all, map[string]any{"ttft_p99": 1e6, "req_per_s": 1e6, "active_vus": int64(16)}, start.Add(5*time.Second)),
			influxdb2.NewPoint("llm_request", map[string]string{"run_id": runID, "testid": h.testid, "model": h.model, "scenario": "chat"},
				map[string]any{"ttft": 1e6, "e2e": 1e6, "ok": true, "status": int64(200), "output_tokens": int64(5)}, start.Add(time.Second)))
	}
	return pts
}

// trendLine returns the verdict table's row of a figure, or "": the last
// row that names it (a server figure has one in the server's table too).
func trendLine(stdout, figure string) string {
	found := ""
	for line := range strings.SplitSeq(stdout, "\n") {
		if strings.HasPrefix(line, "│ "+figure+" (") {
			found = line
		}
	}
	return found
}

// plantTrend starts an InfluxDB and writes the histories in it, their
// newest runs an hour ago; it returns a context bounding the test, the
// server, the environment with its token and the URL trend reads.
func plantTrend(t *testing.T, hs []trendHistory) (context.Context, *influxtest.Server, map[string]string, string) {
	t.Helper()
	srv := influxtest.Start(t)
	now := time.Now().Add(-time.Hour).Truncate(time.Second)
	client := influxdb2.NewClient(srv.URL, srv.Token)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	var pts []*write.Point
	for _, h := range hs {
		pts = append(pts, trendPoints(h, now)...)
	}
	if err := client.WriteAPIBlocking("", srv.Bucket).WritePoint(ctx, pts...); err != nil {
		t.Fatalf("planting the histories: %v", err)
	}
	return ctx, srv, map[string]string{influxdb.TokenEnv: srv.Token}, srv.URL + "?bucket=" + srv.Bucket
}

func TestTrend(t *testing.T) {
	t.Parallel()
	hs := []trendHistory{
		{testid: "stable", model: "llama", runs: 6},
		{testid: "ttft-regressed", model: "llama", runs: 6, newest: map[string]float64{"ttft_p99": 400 * 1.3}},
		{testid: "throughput-dropped", model: "llama", runs: 6, newest: map[string]float64{"output_throughput": 500 * 0.7}},
		{testid: "faster", model: "llama", runs: 6, newest: map[string]float64{"ttft_p99": 400 * 0.7, "output_throughput": 500 * 1.3}},
		{testid: "first", model: "llama", runs: 1},
		// Two models under one testid: llama steady but for its rag
		// scenario, qwen regressed.
		{testid: "nightly", model: "llama", runs: 6, scenarios: []string{"chat", "rag"}, ragNewest: map[string]float64{"e2e_p99": 2 * 1.5 * 5000}},
		{testid: "nightly", model: "qwen", runs: 4, newest: map[string]float64{"tpot_p99": 30 * 1.5}},
		// +30 % against runs that scatter by up to ±30 %: noise.
		{testid: "noisy", model: "llama", runs: 8, spread: 10, newest: map[string]float64{"ttft_p99": 400 * 1.3}},
		// The first run with intervals after runs stored before they were
		// kept: the previous runs' spread judges.
		{testid: "old", model: "llama", runs: 6, old: true, newest: map[string]float64{"ttft_p99": 400 * 1.3}},
	}
	ctx, srv, env, url := plantTrend(t, hs)
	trend := func(args ...string) (int, string, string) {
		t.Helper()
		return cli(t, ctx, env, append([]string{"trend", "--influxdb", url}, args...)...)
	}
	expect := func(name string, wantCode int, verdicts map[string]string, args ...string) string {
		t.Helper()
		code, stdout, stderr := trend(args...)
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, code, wantCode, stdout, stderr)
		}
		for fig, want := range verdicts {
			if line := trendLine(stdout, fig); !strings.Contains(line, " "+want+" ") {
				t.Errorf("%s: %s: %q, want the verdict %q\n%s", name, fig, line, want, stdout)
			}
		}
		return stdout
	}

	allOK := map[string]string{}
	for k := range trendBase() {
		if k != "total_token_throughput" && k != "e2e_p50" {
			allOK[k] = "unchanged"
		}
	}
	out := expect("a stable history", exitcode.OK, allOK, "--testid", "stable")
	for _, want := range []string{"testid stable, whole runs: 6 runs, newest first", "v0.9.0", "stable-l", "✓ no regression beyond 10 %"} {
		if !strings.Contains(out, want) {
			t.Errorf("a stable history: the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "stable-llama") || strings.Contains(out, "1e+06") || strings.Contains(out, "1000000") {
		t.Errorf("a stable history: long run ids, or figures of other measurements:\n%s", out)
	}

	out = expect("ttft p99 +30 %", exitcode.Regression, map[string]string{"ttft_p99": "regression", "ttft_p50": "unchanged", "output_throughput": "unchanged"}, "--testid", "ttft-regressed")
	if !strings.Contains(out, "✗ regression beyond 10 %: ttft_p99 +30.0 %") {
		t.Errorf("ttft p99 +30 %%: the regression is not named:\n%s", out)
	}
	expect("a wider tolerance", exitcode.OK, map[string]string{"ttft_p99": "unchanged"}, "--testid", "ttft-regressed", "--tolerance", "0.35")
	expect("another figure", exitcode.OK, nil, "--testid", "ttft-regressed", "--metric", "output_throughput,ttft_p50")

	out = expect("output throughput −30 %", exitcode.Regression, map[string]string{"output_throughput": "regression", "request_throughput": "unchanged"}, "--testid", "throughput-dropped", "--tolerance", "10%")
	if !strings.Contains(out, "output_throughput -30.0 %") {
		t.Errorf("a throughput drop: not named:\n%s", out)
	}
	expect("an improvement", exitcode.OK, map[string]string{"ttft_p99": "improved", "output_throughput": "improved"}, "--testid", "faster")

	out = expect("a single run", exitcode.OK, map[string]string{"ttft_p99": "no history"}, "--testid", "first")
	if !strings.Contains(out, "no history: a single run") {
		t.Errorf("a single run:\n%s", out)
	}

	expect("model llama", exitcode.OK, map[string]string{"tpot_p99": "unchanged", "e2e_p99": "unchanged"}, "--testid", "nightly", "--model", "llama")
	out = expect("model qwen", exitcode.Regression, map[string]string{"tpot_p99": "regression"}, "--testid", "nightly", "--model", "qwen")
	if !strings.Contains(out, "4 runs") {
		t.Errorf("model qwen has 4 runs:\n%s", out)
	}
	expect("scenario rag", exitcode.Regression, map[string]string{"e2e_p99": "regression", "ttft_p99": "unchanged"}, "--testid", "nightly", "--model", "llama", "--scenario", "rag")
	expect("scenario chat", exitcode.OK, map[string]string{"e2e_p99": "unchanged"}, "--testid", "nightly", "--model", "llama", "--scenario", "chat")
	out = expect("+30 % within the runs' spread", exitcode.OK, map[string]string{"ttft_p99": "inconclusive"}, "--testid", "noisy")
	if !strings.Contains(out, "ttft_p99 inconclusive: too noisy: +30.0 % is within the noise") || !strings.Contains(out, "±") {
		t.Errorf("a change within the spread: the reason or the spread is missing:\n%s", out)
	}
	expect("--strict", exitcode.Regression, map[string]string{"ttft_p99": "inconclusive"}, "--testid", "noisy", "--strict")
	out = expect("old runs, judged by their spread", exitcode.Regression, map[string]string{"ttft_p99": "regression"}, "--testid", "old")
	if line := trendLine(out, "ttft_p99"); !strings.Contains(line, "±2.9 %") {
		t.Errorf("old runs: the spread of their ±3 %% jitter is not shown: %q\n%s", line, out)
	}
	out = expect("--runs 3", exitcode.Regression, nil, "--testid", "nightly", "--model", "qwen", "--runs", "3", "--metric", "tpot_p99")
	if !strings.Contains(out, "3 runs") || trendLine(out, "ttft_p99") != "" {
		t.Errorf("--runs 3 --metric tpot_p99:\n%s", out)
	}

	code, stdout, stderr := trend("--testid", "nobody")
	if code != exitcode.Error || !strings.Contains(stderr, "no run of testid nobody") || stdout != "" {
		t.Errorf("an unknown testid: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = cli(t, ctx, map[string]string{influxdb.TokenEnv: "llmrun:wrong"}, "trend", "--influxdb", url, "--testid", "stable")
	if code != exitcode.Error || !strings.Contains(stderr, srv.URL) || !strings.Contains(stderr, influxdb.TokenEnv) || strings.Contains(stderr+stdout, "wrong") {
		t.Errorf("a wrong token: exit %d, want 1 with the URL and %s named, and not the token\nstdout:\n%s\nstderr:\n%s", code, influxdb.TokenEnv, stdout, stderr)
	}
	code, _, stderr = cli(t, ctx, env, "trend", "--influxdb", "http://127.0.0.1:1", "--testid", "stable")
	if code != exitcode.Error || !strings.Contains(stderr, "http://127.0.0.1:1") || !strings.Contains(stderr, "unreachable") {
		t.Errorf("no server: exit %d\nstderr:\n%s", code, stderr)
	}
	code, stdout, stderr = cli(t, ctx, env, "trend", "--influxdb", srv.URL+"?bucket=perf&db=llmrun&rp=autogen", "--testid", "stable")
	if code != exitcode.OK || !strings.Contains(stdout, "testid stable, whole runs: 6 runs") {
		t.Errorf("db and rp naming what the bucket does not: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr = cli(t, ctx, env, "trend", "--influxdb", url+"&db=nodb", "--testid", "stable")
	if code != exitcode.Error || !strings.Contains(stderr, `database "nodb" not found`) || !strings.Contains(stderr, "db=") {
		t.Errorf("an unknown database: exit %d, want 1 naming it and the db= option\nstderr:\n%s", code, stderr)
	}
}

// trend selects runs by their --tag pairs, prints the run's version on a
// scenario's rows, and a selection that matches no run lists what exists
// and the nearest.
func TestTrendSelects(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	now := time.Now().Add(-time.Hour).Truncate(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var pts []*write.Point
	for _, h := range []trendHistory{
		// One test in two environments: staging steady, prod regressed.
		{testid: "nightly-chat", model: "llama", runs: 6, scenarios: []string{"chat", "rag"}},
		{testid: "nightly-chat", model: "llama", runs: 3, env: "prod", newest: map[string]float64{"ttft_p99": 400 * 1.3}},
		{testid: "nightly-code", model: "qwen", runs: 2},
	} {
		pts = append(pts, trendPoints(h, now)...)
	}
	client := influxdb2.NewClient(srv.URL, srv.Token)
	defer client.Close()
	if err := client.WriteAPIBlocking("", srv.Bucket).WritePoint(ctx, pts...); err != nil {
		t.Fatalf("planting the histories: %v", err)
	}
	env := map[string]string{influxdb.TokenEnv: srv.Token}
	trend := func(args ...string) (int, string, string) {
		t.Helper()
		return cli(t, ctx, env, append([]string{"trend", "--influxdb", srv.URL + "?bucket=" + srv.Bucket}, args...)...)
	}
	for _, c := range []struct {
		name     string
		args     []string
		code     int
		want     []string // in stdout
		wantRuns int
	}{
		{"staging", []string{"--tag", "env=staging"}, exitcode.OK, []string{"testid nightly-chat, tag env=staging, whole runs: 6 runs"}, 6},
		{"prod", []string{"--tag", "env=prod"}, exitcode.Regression, []string{"testid nightly-chat, tag env=prod, whole runs: 3 runs", "✗ regression beyond 10 %: ttft_p99 +"}, 3},
		{"both tags", []string{"--tag", "env=prod", "--tag", "gpu="}, exitcode.Regression, []string{"3 runs"}, 3},
		// The version of each run is on the scenario's rows too.
		{"a scenario", []string{"--scenario", "rag"}, exitcode.OK, []string{"scenario rag: 6 runs", "v0.9.0", "v0.4.0"}, 6},
		{"a scenario and a tag", []string{"--tag", "env=staging", "--scenario", "rag"}, exitcode.OK, []string{"scenario rag: 6 runs", "v0.9.0", "v0.4.0"}, 6},
	} {
		code, stdout, stderr := trend(append([]string{"--testid", "nightly-chat"}, c.args...)...)
		if code != c.code || stderr != "" {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.name, code, c.code, stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: the output lacks %q:\n%s", c.name, w, stdout)
			}
		}
		if n := strings.Count(stdout, "│ nightly- │"); n != c.wantRuns {
			t.Errorf("%s: %d runs listed, want %d:\n%s", c.name, n, c.wantRuns, stdout)
		}
	}

	for _, c := range []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"a misspelt testid", []string{"--testid", "nightly-caht"}, []string{
			"no run of testid nightly-caht, whole runs in the last 365d",
			"--testid nightly-caht: no run has it; the test ids with runs then, newest first: nightly-chat, nightly-code (did you mean --testid nightly-chat?)"}},
		{"a misspelt scenario", []string{"--testid", "nightly-chat", "--scenario", "rga"}, []string{
			"no run of testid nightly-chat, scenario rga",
			"--scenario rga: no run has it; the scenarios of its runs of several scenarios (a run of one stores only its whole run's figures): chat, rag (did you mean --scenario rag?)"}},
		{"a misspelt tag value", []string{"--testid", "nightly-chat", "--tag", "env=stagin"}, []string{
			"--tag env=stagin: no run has it; the values of tag env on its runs: env=prod, env=staging (did you mean --tag env=staging?)"}},
		{"a tag no run has", []string{"--testid", "nightly-chat", "--tag", "gpu=h100"}, []string{
			"--tag gpu=h100: no run has one (the values of tag gpu on its runs: none)"}},
		{"a misspelt model", []string{"--testid", "nightly-chat", "--model", "lama"}, []string{
			"--model lama: no run has it; the models of its runs: llama (did you mean --model llama?)"}},
		{"values that exist apart", []string{"--testid", "nightly-chat", "--tag", "env=prod", "--scenario", "rag"}, []string{
			"none has them all together"}},
	} {
		code, stdout, stderr := trend(c.args...)
		if code != exitcode.Error || stdout != "" {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.name, code, exitcode.Error, stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, w, stderr)
			}
		}
	}
}

// A newest run whose client its machine limited is inconclusive on its
// latencies and throughputs, naming the run and its limit: no verdict,
// exit 112, when one moved as a regression would (109 with --strict); a
// limited previous run is left out of the baseline;
// points stored before the client-health fields are read as unknown and
// judged as measured.
func TestTrendMachineLimited(t *testing.T) {
	t.Parallel()
	const limit = "other processes on this machine took the CPU (other processes used 99 % of the 2 CPUs)"
	slower := map[string]float64{"tpot_p50": 20 * 1.154}
	hs := []trendHistory{
		{testid: "hogged", model: "llama", runs: 2, newest: slower, clients: []string{limit, limit}},
		{testid: "hogged-scenario", model: "llama", runs: 2, scenarios: []string{"chat", "rag"}, ragNewest: map[string]float64{"tpot_p50": 1.5 * 20 * 1.154}, clients: []string{limit, "ok"}},
		{testid: "one-hogged-before", model: "llama", runs: 6, newest: map[string]float64{"tpot_p50": 20 * 1.3}, clients: []string{"ok", "ok", limit, "ok", "ok", "ok"}},
		{testid: "healthy", model: "llama", runs: 2, newest: slower, clients: []string{"ok", "ok"}},
		{testid: "stored-before", model: "llama", runs: 3, newest: slower, clients: []string{"ok"}},
	}
	ctx, _, env, url := plantTrend(t, hs)
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		verdicts  map[string]string
		want      []string
		forbidden []string
	}{
		{"a limited newest run", []string{"--testid", "hogged"}, exitcode.MachineLimited,
			map[string]string{"tpot_p50": "inconclusive (machine-limited)", "output_throughput": "inconclusive (machine-limited)", "success_rate": "unchanged"},
			[]string{"machine-limited: the newest run hogged-l (", "): its client was limited: " + limit + "; its latencies and throughputs are inconclusive",
				"machine-limited: run hogged-l (", "the latencies and throughputs compared with it are inconclusive", " limited ",
				"inconclusive: machine-limited: the clients of runs hogged-l, hogged-l were limited: " + limit, "+13.1 %",
				"? machine-limited, no verdict beyond 10 %: tpot_p50 +13.1 % (a regression but for the machine's limit): no verdict, exit 112"},
			[]string{"│ regression", "✗"}},
		{"--strict fails it", []string{"--testid", "hogged", "--strict"}, exitcode.Regression, nil,
			[]string{"--strict fails the inconclusive figures: ", "tpot_p50 +13.1 %"}, nil},
		{"a scenario's points carry the health", []string{"--testid", "hogged-scenario", "--scenario", "rag"}, exitcode.MachineLimited,
			map[string]string{"tpot_p50": "inconclusive (machine-limited)"}, []string{"machine-limited: the newest run", " ok "}, []string{"│ regression"}},
		{"a limited previous run is left out", []string{"--testid", "one-hogged-before"}, exitcode.Regression,
			map[string]string{"tpot_p50": "regression", "ttft_p50": "unchanged"},
			[]string{"machine-limited: run one-hogg (", "left out of the baseline of latencies and throughputs", "✗ regression beyond 10 %: tpot_p50 +"}, nil},
		{"healthy runs regress", []string{"--testid", "healthy"}, exitcode.Regression, map[string]string{"tpot_p50": "regression"},
			[]string{"✗ regression beyond 10 %: tpot_p50 +"}, []string{"machine-limited", "unknown"}},
		{"points stored before the fields are unknown", []string{"--testid", "stored-before"}, exitcode.Regression, map[string]string{"tpot_p50": "regression"},
			[]string{" unknown ", "client health unknown (no reading stored: written before llmrun kept it, or not measured), judged as measured: run stored-b (", "✗ regression beyond 10 %: tpot_p50 +"},
			[]string{"machine-limited", "the newest run stored-b"}},
	} {
		code, stdout, stderr := cli(t, ctx, env, append([]string{"trend", "--influxdb", url}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.name, code, tc.code, stdout, stderr)
		}
		for fig, want := range tc.verdicts {
			if line := trendLine(stdout, fig); !strings.Contains(line, " "+want+" ") {
				t.Errorf("%s: %s: %q, want the verdict %q\n%s", tc.name, fig, line, want, stdout)
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: the output lacks %q:\n%s", tc.name, w, stdout)
			}
		}
		for _, f := range tc.forbidden {
			if strings.Contains(stdout, f) {
				t.Errorf("%s: the output has %q:\n%s", tc.name, f, stdout)
			}
		}
	}
}

// Bad command lines exit 2 before anything is read.
func TestTrendCommandLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--testid", "x"}, "--influxdb URL is required"},
		{[]string{"--influxdb", "http://127.0.0.1:1"}, "--testid is required"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--tolerance", "ten"}, "--tolerance"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--tolerance", "10"}, "10%"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--metric", "ttft_p99,speed"}, `"speed"`},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--since", "a year"}, "--since"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--since", "0d"}, "--since"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--runs", "0"}, "--runs"},
		{[]string{"--influxdb", "127.0.0.1:8086", "--testid", "x"}, "--influxdb"},
		{[]string{"--influxdb", "http://127.0.0.1:1?token=secret", "--testid", "x"}, "LLMRUN_INFLUXDB_TOKEN"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "extra"}, `"extra"`},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--bogus"}, "bogus"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--tag", "env"}, "KEY=VALUE"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--tag", "model=llama"}, "--model"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--tag", "instance=0"}, "instances of a run together"},
		{[]string{"--influxdb", "http://127.0.0.1:1", "--testid", "x", "--scenario", "rag", "--metric", "ttft_p99,server_preemptions"},
			"--metric server_preemptions: a server figure is the whole run's, not a scenario's: drop --scenario"},
	} {
		code, stdout, stderr := cli(t, ctx, nil, append([]string{"trend"}, c.args...)...)
		if code != exitcode.Usage || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.args, code, exitcode.Usage, c.want, stdout, stderr)
		}
	}
	code, stdout, _ := cli(t, ctx, nil, "trend", "--help")
	if code != exitcode.OK || !strings.Contains(stdout, "Usage: llmrun trend") || !strings.Contains(stdout, "109") {
		t.Errorf("--help: exit %d\n%s", code, stdout)
	}
}
