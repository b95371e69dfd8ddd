package influxdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
)

// historyRun is a run planted for History: its whole-run llm_run point, and
// per-scenario points when it has scenarios.
type historyRun struct {
	testid, model, runID string
	age                  time.Duration // how long before the test the run started
	ttftP99              float64
	scenarios            []string
	tag                  [2]string // a --tag of the run, if any: runs differ in their tag keys
}

// historyPoints follows the schema of docs/influxdb.md: the llm_run points
// of the runs, plus points of the other measurements with the same tags,
// which History must ignore.
func historyPoints(runs []historyRun, now time.Time) []*write.Point {
	var pts []*write.Point
	for _, r := range runs {
		start := now.Add(-r.age)
		tags := map[string]string{"run_id": r.runID, "testid": r.testid, "model": r.model}
		if r.tag[0] != "" {
			tags[r.tag[0]] = r.tag[1]
		}
		fields := map[string]any{
			"duration_s": 60.0, "requests": int64(100), "completed": int64(99), "failed": int64(1), "interrupted": int64(0),
			"success_rate": 0.99, "request_throughput": 1.65, "output_throughput": 420.5, "total_token_throughput": 900.0,
			"ttft_p50": r.ttftP99 / 2, "ttft_p99": r.ttftP99, "tpot_p99": 12.5, "itl_p99": 14.0, "e2e_p99": 3000.0,
			"iterations": int64(100), "aborted": false, "interrupted_run": false,
			"version": "v1.2.3", "script": "chat.js", "target": "http://gpu-1:8000/v1", "load_shape": "8 looping VUs for 1m0s", "seed": int64(1),
		}
		pts = append(pts, influxdb2.NewPoint("llm_run", tags, fields, start))
		for i, sc := range r.scenarios {
			st := maps.Clone(tags)
			st["scenario"] = sc
			pts = append(pts, influxdb2.NewPoint("llm_run", st, map[string]any{
				"requests": int64(50), "success_rate": 1.0, "output_throughput": 200.0 + float64(i), "ttft_p99": r.ttftP99 + float64(i+1),
			}, start))
		}
		noise := map[string]string{"run_id": r.runID, "testid": r.testid, "scenario": "_all"}
		pts = append(pts,
			influxdb2.NewPoint("llm_run_start", map[string]string{"run_id": r.runID, "testid": r.testid}, map[string]any{"max_vus": int64(8)}, start),
			influxdb2.NewPoint("llm_interval", noise, map[string]any{"ttft_p99": 1e6, "requests": int64(5), "active_vus": int64(8)}, start.Add(5*time.Second)),
			influxdb2.NewPoint("llm_request", map[string]string{"run_id": r.runID, "testid": r.testid, "model": r.model, "scenario": "default"},
				map[string]any{"ttft": 1e6, "e2e": 2e6, "ok": true, "status": int64(200)}, start.Add(time.Second)))
	}
	return pts
}

// plantHistory writes the runs to the server.
func plantHistory(t *testing.T, s *influxtest.Server, runs []historyRun, now time.Time) {
	t.Helper()
	client := influxdb2.NewClient(s.URL, s.Token)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.WriteAPIBlocking("", s.Bucket).WritePoint(ctx, historyPoints(runs, now)...); err != nil {
		t.Fatalf("planting the history: %v", err)
	}
}

func TestHistory(t *testing.T) {
	s := influxtest.Start(t)
	now := time.Now().Truncate(time.Second)
	day := 24 * time.Hour
	plantHistory(t, s, []historyRun{
		{testid: "nightly", model: "llama", runID: "r1", age: 5 * day, ttftP99: 101, scenarios: []string{"chat", "rag"}, tag: [2]string{"env", "staging"}},
		{testid: "nightly", model: "llama", runID: "r2", age: 4 * day, ttftP99: 102, scenarios: []string{"chat", "rag"}, tag: [2]string{"gpu", "h100"}},
		{testid: "nightly", model: "qwen", runID: "r3", age: 3 * day, ttftP99: 103},
		{testid: "nightly", model: "llama", runID: "r4", age: 2 * day, ttftP99: 104, scenarios: []string{"chat", "rag"}, tag: [2]string{"env", "staging"}},
		{testid: "nightly", model: "llama", runID: "r5", age: 400 * day, ttftP99: 105},
		{testid: "other", model: "llama", runID: "o1", age: day, ttftP99: 999},
		{testid: `we"ird ${x} \ id`, model: "llama", runID: "w1", age: day, ttftP99: 7},
	}, now)
	cfg, err := influxdb.ParseConfig(s.URL+"?bucket="+s.Bucket, func(k string) string {
		if k == influxdb.TokenEnv {
			return s.Token
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := func(f influxdb.Filter) []influxdb.RunRecord {
		t.Helper()
		if f.Since == 0 {
			f.Since = 365 * day
		}
		runs, err := influxdb.History(ctx, cfg, f)
		if err != nil {
			t.Fatalf("History(%+v): %v", f, err)
		}
		return runs
	}
	ids := func(runs []influxdb.RunRecord) string {
		var s []string
		for _, r := range runs {
			s = append(s, r.RunID)
		}
		return strings.Join(s, ",")
	}

	runs := read(influxdb.Filter{TestID: "nightly", Runs: 10})
	if got := ids(runs); got != "r4,r3,r2,r1" {
		t.Fatalf("whole-run points of nightly in the last year: %s, want r4,r3,r2,r1 (newest first; other testids, scenarios, measurements and older runs left out)", got)
	}
	r := runs[0]
	if !r.Time.Equal(now.Add(-2*day)) || r.Model != "llama" || r.Scenario != "" || r.Version != "v1.2.3" || r.Target != "http://gpu-1:8000/v1" {
		t.Errorf("newest run: %+v", r)
	}
	want := map[string]float64{"ttft_p99": 104, "ttft_p50": 52, "requests": 100, "success_rate": 0.99, "output_throughput": 420.5, "seed": 1, "iterations": 100}
	for k, v := range want {
		if got, ok := r.Fields[k]; !ok || got != v {
			t.Errorf("field %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	for _, k := range []string{"aborted", "version", "max_vus", "active_vus", "table", "_value"} {
		if _, ok := r.Fields[k]; ok {
			t.Errorf("field %s is not a numeric field of llm_run, but is in %v", k, r.Fields)
		}
	}

	if got := ids(read(influxdb.Filter{TestID: "nightly", Runs: 2})); got != "r4,r3" {
		t.Errorf("Runs 2: %s, want r4,r3", got)
	}
	if got := ids(read(influxdb.Filter{TestID: "nightly", Model: "llama", Runs: 10})); got != "r4,r2,r1" {
		t.Errorf("model llama: %s, want r4,r2,r1", got)
	}
	if got := ids(read(influxdb.Filter{TestID: "nightly", Runs: 10, Since: 1000 * day})); got != "r4,r3,r2,r1,r5" {
		t.Errorf("since 1000 days: %s, want r4,r3,r2,r1,r5", got)
	}
	chat := read(influxdb.Filter{TestID: "nightly", Scenario: "rag", Runs: 10})
	if got := ids(chat); got != "r4,r2,r1" {
		t.Errorf("scenario rag: %s, want r4,r2,r1", got)
	}
	if len(chat) > 0 && (chat[0].Scenario != "rag" || chat[0].Fields["ttft_p99"] != 106 || chat[0].Fields["output_throughput"] != 201) {
		t.Errorf("scenario rag's newest point: %+v", chat[0])
	}
	if got := ids(read(influxdb.Filter{TestID: `we"ird ${x} \ id`, Runs: 10})); got != "w1" {
		t.Errorf("a testid with quotes, ${ and a backslash: %q, want w1", got)
	}
	if got := read(influxdb.Filter{TestID: "none", Runs: 10}); len(got) != 0 {
		t.Errorf("an unknown testid: %v, want no run", got)
	}

	bad := cfg
	bad.Token = "llmrun:wrong-password"
	_, err = influxdb.History(ctx, bad, influxdb.Filter{TestID: "nightly", Runs: 10, Since: day})
	if err == nil || !strings.Contains(err.Error(), s.URL) || !strings.Contains(err.Error(), influxdb.TokenEnv) || strings.Contains(err.Error(), "wrong-password") {
		t.Errorf("a wrong token: %v; want an error naming the URL and %s, without the token", err, influxdb.TokenEnv)
	}
	gone := cfg
	gone.URL = "http://127.0.0.1:1"
	_, err = influxdb.History(ctx, gone, influxdb.Filter{TestID: "nightly", Runs: 10, Since: day})
	if err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:1") || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("no server: %v; want an error naming the URL and saying it is unreachable", err)
	}
	nob := cfg
	nob.Bucket = "nodb/autogen"
	_, err = influxdb.History(ctx, nob, influxdb.Filter{TestID: "nightly", Runs: 10, Since: day})
	if err == nil || !strings.Contains(err.Error(), "nodb/autogen") {
		t.Errorf("no such bucket: %v; want an error naming the bucket", err)
	}
}

func TestHistoryQuery(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	q := influxdb.HistoryQuery("llmrun/autogen", influxdb.Filter{TestID: "nightly", Runs: 10, Since: 30 * 24 * time.Hour}, now)
	for _, want := range []string{`from(bucket: "llmrun/autogen")`, "range(start: 2025-05-02T12:00:00Z)", `r.testid == "nightly"`, "not exists r.scenario", "limit(n: 10)"} {
		if !strings.Contains(q, want) {
			t.Errorf("query lacks %s:\n%s", want, q)
		}
	}
	if strings.Contains(q, "r.model") {
		t.Errorf("query filters on a model none was given:\n%s", q)
	}
	q = influxdb.HistoryQuery("b", influxdb.Filter{TestID: "t", Model: "m\nx", Scenario: "chat", Runs: 3, Since: time.Hour}, now)
	for _, want := range []string{`r.scenario == "chat"`, `r.model == "m\nx"`} {
		if !strings.Contains(q, want) {
			t.Errorf("query lacks %s:\n%s", want, q)
		}
	}
	if strings.Contains(q, "not exists") {
		t.Errorf("a scenario's query keeps only whole-run points:\n%s", q)
	}
}

// dashboardFile is the Grafana dashboard of the examples.
const dashboardFile = "../../../examples/grafana/llmrun-dashboard.json"

// schemaFields returns the measurements of docs/influxdb.md's schema and
// their fields (llm_interval's errors_<class> aside).
func schemaFields() map[string][]string {
	run := []string{"duration_s", "requests", "completed", "failed", "interrupted", "success_rate", "request_throughput",
		"output_throughput", "total_token_throughput", "input_tokens", "output_tokens", "cached_tokens", "mean_input_tokens",
		"mean_output_tokens", "iterations", "dropped_iterations", "thresholds_passed", "thresholds_failed", "aborted",
		"interrupted_run", "client_warnings", "version", "script", "script_sha256", "target", "base_url", "host", "load_shape", "seed"}
	for _, l := range []string{"ttft", "tpot", "itl", "e2e", "ttfb"} {
		for _, s := range []string{"mean", "p50", "p90", "p95", "p99", "max"} {
			run = append(run, l+"_"+s)
		}
	}
	return map[string][]string{
		"llm_request": {"ttft", "ttfo", "tpot", "e2e", "itl_mean", "itl_p99", "output_tokens", "input_tokens", "cached_tokens",
			"reasoning_tokens", "ok", "status", "error_class"},
		"llm_interval": {"requests", "failed", "req_per_s", "output_tok_per_s", "total_tok_per_s", "active_vus",
			"ttft_p50", "ttft_p90", "ttft_p99", "tpot_p50", "tpot_p99", "e2e_p50", "e2e_p99"},
		"llm_run_start": {"max_vus"},
		"llm_run":       run,
	}
}

// dashboardPanel is the part of a Grafana panel the tests read.
type dashboardPanel struct {
	Type, Title string
	Datasource  struct{ Type, UID string }
	Targets     []struct {
		Query      string
		Datasource struct{ Type, UID string }
	}
	Panels []dashboardPanel
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	SchemaVersion int
	Inputs        []struct {
		Name     string
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Panels     []dashboardPanel
	Templating struct {
		List []struct {
			Name, Type, Query string
			Current           struct{ Value any }
		}
	}
}

// readDashboard parses the dashboard and returns it with its panels,
// those of rows included, rows left out.
func readDashboard(t *testing.T) (dashboard, []dashboardPanel) {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}
	var panels []dashboardPanel
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			if p.Type != "row" {
				panels = append(panels, p)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return d, panels
}

var (
	measurementRef = regexp.MustCompile(`r\._measurement == "([^"]*)"`)
	fieldRef       = regexp.MustCompile(`r\._field == "([^"]*)"`)
	prefixRef      = regexp.MustCompile(`prefix: "([^"]*)"`)
	columnRef      = regexp.MustCompile(`\br\.(\w+)`)
	columnsList    = regexp.MustCompile(`columns: \[([^\]]*)\]`)
)

// checkFlux fails t unless the Flux query names measurements of the
// schema, and only fields of them and columns that exist.
func checkFlux(t *testing.T, name, q string) {
	t.Helper()
	schema := schemaFields()
	columns := []string{"_measurement", "_field", "_value", "_time", "_start", "_stop", "run_id", "testid", "model", "scenario"}
	ms := measurementRef.FindAllStringSubmatch(q, -1)
	if len(ms) == 0 {
		t.Errorf("%s: the query names no measurement:\n%s", name, q)
	}
	var names, fields []string
	for _, m := range ms {
		f, ok := schema[m[1]]
		if !ok {
			t.Errorf("%s: measurement %q is not in the schema", name, m[1])
		}
		names, fields = append(names, m[1]), append(fields, f...)
	}
	for _, m := range fieldRef.FindAllStringSubmatch(q, -1) {
		if !slices.Contains(fields, m[1]) {
			t.Errorf("%s: field %q is not a field of %s in the schema", name, m[1], strings.Join(names, ", "))
		}
	}
	for _, m := range prefixRef.FindAllStringSubmatch(q, -1) {
		if m[1] != "errors_" || !strings.Contains(q, `"llm_interval"`) {
			t.Errorf("%s: fields by prefix %q: only llm_interval's errors_<class> are", name, m[1])
		}
	}
	for _, m := range columnRef.FindAllStringSubmatch(q, -1) {
		if !slices.Contains(columns, m[1]) {
			t.Errorf("%s: column r.%s is no tag of the schema", name, m[1])
		}
	}
	for _, m := range columnsList.FindAllStringSubmatch(q, -1) {
		for c := range strings.SplitSeq(m[1], ",") {
			if c = strings.Trim(strings.TrimSpace(c), `"`); !slices.Contains(columns, c) {
				t.Errorf("%s: column %q is no tag of the schema", name, c)
			}
		}
	}
}

// The dashboard is valid JSON for an InfluxDB data source chosen on
// import, with the bucket, testid and model variables, and each panel has
// a Flux query of the schema's measurements and fields.
func TestDashboard(t *testing.T) {
	d, panels := readDashboard(t)
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d: want a current one (39)", d.SchemaVersion)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_INFLUXDB" || d.Inputs[0].PluginID != "influxdb" {
		t.Errorf("inputs %+v: want one, DS_INFLUXDB, an influxdb data source", d.Inputs)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Query
		if v.Name == "bucket" && v.Current.Value != "llmrun/autogen" {
			t.Errorf("bucket's default is %v, want llmrun/autogen", v.Current.Value)
		}
		if v.Type == "query" {
			checkFlux(t, "variable "+v.Name, v.Query)
		}
	}
	for _, name := range []string{"bucket", "testid", "model"} {
		if _, ok := vars[name]; !ok {
			t.Errorf("no variable %s", name)
		}
	}
	if len(panels) < 9 {
		t.Errorf("%d panels, want the 4 per-run trends and the 5 live-run panels", len(panels))
	}
	var measurements []string
	for _, p := range panels {
		if p.Datasource.UID != "${DS_INFLUXDB}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %+v, %d queries; want ${DS_INFLUXDB} and a query", p.Title, p.Datasource, len(p.Targets))
		}
		for _, q := range p.Targets {
			if q.Datasource.UID != "${DS_INFLUXDB}" || !strings.Contains(q.Query, `from(bucket: "${bucket}")`) || !strings.Contains(q.Query, `r.testid == "${testid}"`) {
				t.Errorf("panel %q: a query not of ${DS_INFLUXDB}, the bucket and the testid:\n%s", p.Title, q.Query)
			}
			checkFlux(t, "panel "+p.Title, q.Query)
			for _, m := range measurementRef.FindAllStringSubmatch(q.Query, -1) {
				measurements = append(measurements, m[1])
			}
		}
	}
	for _, m := range []string{"llm_run", "llm_interval"} {
		if !slices.Contains(measurements, m) {
			t.Errorf("no panel reads %s", m)
		}
	}
}

// grafanaRegex formats a value as Grafana's ${var:regex} does: regular
// expression characters and the slash escaped.
func grafanaRegex(v string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(v), "/", `\/`)
}

// The dashboard's queries run on a real server (InfluxDB 1.8's Flux), with
// the values Grafana would put in, and each finds the points planted.
func TestDashboardQueries(t *testing.T) {
	d, panels := readDashboard(t)
	s := influxtest.Start(t)
	now := time.Now().Add(-time.Minute).Truncate(time.Second)
	const testid, model = "dash", "meta/llama-3.1-8b"
	var runs []historyRun
	for i := range 3 {
		runs = append(runs, historyRun{testid: testid, model: model, runID: fmt.Sprintf("d%d", i), age: time.Duration(i) * 24 * time.Hour, ttftP99: 100, scenarios: []string{"chat", "rag"}})
	}
	pts := historyPoints(runs, now)
	for i := range 4 {
		at := now.Add(time.Duration(i) * 5 * time.Second)
		all := map[string]string{"run_id": "d0", "testid": testid, "scenario": "_all"}
		pts = append(pts,
			influxdb2.NewPoint("llm_interval", all, map[string]any{"requests": int64(10), "failed": int64(1), "req_per_s": 2.0,
				"output_tok_per_s": 400.0, "active_vus": int64(8), "errors_timeout": int64(1)}, at),
			influxdb2.NewPoint("llm_interval", map[string]string{"run_id": "d0", "testid": testid, "scenario": "chat"},
				map[string]any{"requests": int64(10), "ttft_p50": 50.0, "ttft_p99": 90.0, "errors_timeout": int64(1)}, at))
	}
	client := influxdb2.NewClient(s.URL, s.Token)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.WriteAPIBlocking("", s.Bucket).WritePoint(ctx, pts...); err != nil {
		t.Fatal(err)
	}
	grafana := strings.NewReplacer("${bucket}", s.Bucket, "${testid}", testid, "${model:regex}", grafanaRegex(model),
		"v.timeRangeStart", "-200d", "v.timeRangeStop", "now()", "v.windowPeriod", "10s")
	run := func(name, q string) []string {
		t.Helper()
		res, err := client.QueryAPI("").Query(ctx, grafana.Replace(q))
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, q)
			return nil
		}
		defer res.Close()
		var values []string
		for res.Next() {
			values = append(values, fmt.Sprint(res.Record().Value()))
		}
		if err := res.Err(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, q)
		}
		return values
	}
	for _, p := range panels {
		for _, q := range p.Targets {
			if got := run("panel "+p.Title, q.Query); len(got) == 0 {
				t.Errorf("panel %q: no point found:\n%s", p.Title, q.Query)
			}
		}
	}
	for _, v := range d.Templating.List {
		want := map[string]string{"testid": testid, "model": model}[v.Name]
		if v.Type == "query" && !slices.Contains(run("variable "+v.Name, v.Query), want) {
			t.Errorf("variable %s: %s is not among its values", v.Name, want)
		}
	}
}
