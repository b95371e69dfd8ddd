package influxdb_test

import (
	"cmp"
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
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
)

// dashboardFile is the Grafana dashboard of the examples.
const dashboardFile = "../../../examples/grafana/llmrun-dashboard.json"

// schemaFields returns the measurements of docs/influxdb.md's schema and
// their fields (llm_interval's errors_<class> aside).
func schemaFields() map[string][]string {
	run := []string{"duration_s", "requests", "completed", "failed", "interrupted", "success_rate", "request_throughput",
		"output_throughput", "total_token_throughput", "input_tokens", "output_tokens", "cached_tokens", "mean_input_tokens",
		"mean_output_tokens", "iterations", "dropped_iterations", "thresholds_passed", "thresholds_failed", "aborted",
		"interrupted_run", "client_warnings", "client_limited", "client_limit", "version", "script", "script_sha256", "target", "base_url", "host", "load_shape", "seed", "instances"}
	for _, l := range []string{"ttft", "tpot", "itl", "e2e", "ttfb"} {
		for _, s := range []string{"mean", "p50", "p90", "p95", "p99", "max"} {
			run = append(run, l+"_"+s)
		}
	}
	server := []string{"prefix_cache_hit_rate", "energy_joules", "energy_method", "version", "gpus", "scrapes_ok", "scrapes_failed",
		"scrapes_skipped", "gpu_uuid", "gpu_model", "gpu_host", "clock_event_reasons", "targets", "warnings", "output_tokens",
		"joules_per_output_token", "output_tokens_per_joule"}
	for _, d := range engines.Definitions {
		stats := map[engines.Kind][]string{engines.Gauge: {"mean", "max"}, engines.Counter: {"delta"},
			engines.Histogram: {"p50", "p90", "p99", "count", "sum"}}[d.Kind]
		for _, st := range stats {
			server = append(server, string(d.Figure)+"_"+st)
		}
	}
	return map[string][]string{
		"llm_server":        server,
		"llm_server_series": {"running", "waiting", "kv_cache_usage", "gpu_utilization", "gpu_power_watts"},
		"llm_request": {"ttft", "ttfo", "tpot", "e2e", "itl_mean", "itl_p99", "output_tokens", "input_tokens", "cached_tokens",
			"reasoning_tokens", "image_count", "image_bytes", "image_pixels", "ok", "status", "error_class"},
		"llm_interval": {"requests", "failed", "req_per_s", "output_tok_per_s", "total_tok_per_s", "active_vus",
			"ttft_p50", "ttft_p90", "ttft_p99", "tpot_p50", "tpot_p99", "e2e_p50", "e2e_p99"},
		"llm_run_start": {"max_vus"},
		"llm_run":       run,
	}
}

// schemaTags are the tags of the schema's points that the dashboard may
// filter or group by.
var schemaTags = []string{"run_id", "testid", "model", "scenario", "target", "kind", "gpu"}

// dashboardPanel is the part of a Grafana panel the tests read.
type dashboardPanel struct {
	Type, Title string
	Datasource  struct{ Type, UID string }
	Targets     []struct {
		Query        string
		RawQuery     bool
		ResultFormat string
		Datasource   struct{ Type, UID string }
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
			IncludeAll        bool
			AllValue          string
			Multi             bool
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
	// stringLiteral, regexLiteral and quotedIdent are InfluxQL's
	// 'string', /regex/ and "identifier", escapes included.
	stringLiteral = regexp.MustCompile(`'(?:[^'\\]|\\.)*'`)
	regexLiteral  = regexp.MustCompile(`/(?:[^/\\]|\\.)*/`)
	quotedIdent   = regexp.MustCompile(`(\bAS )?"((?:[^"\\]|\\.)*)"`)
	fromClause    = regexp.MustCompile(`\bFROM "([^"]*)"`)
	bareWord      = regexp.MustCompile(`[$A-Za-z_][$\w]*`)
)

// influxQLWords are the unquoted words the dashboard's queries may use:
// keywords, functions and Grafana's macros.
var influxQLWords = []string{"SELECT", "FROM", "WHERE", "AND", "OR", "GROUP", "BY", "AS", "time", "fill", "none", "mean", "max", "sum",
	"SHOW", "TAG", "KEYS", "VALUES", "WITH", "KEY", "tag", "$timeFilter", "$__interval"}

// tagKeyVariable is the dashboard's variable whose value is a tag key, the
// one identifier a query may name by a variable ("$tag"::tag).
const tagKeyVariable = "$tag"

// grafanaMacros are the macros Grafana puts in a query besides the
// dashboard's variables.
var grafanaMacros = []string{"timeFilter", "__interval"}

// variableRef is a variable or macro in a query: $name.
var variableRef = regexp.MustCompile(`\$(\w+)`)

// checkInfluxQL fails t unless the InfluxQL query reads one measurement of
// the schema, selects only its fields (or, from llm_interval, the
// errors_<class> fields by /^errors_/), filters and groups only by tags
// of the schema, and names everything else by quoted identifiers.
func checkInfluxQL(t *testing.T, name, q string) {
	t.Helper()
	q = stringLiteral.ReplaceAllString(q, "''")
	from := fromClause.FindAllStringSubmatchIndex(q, -1)
	if len(from) != 1 {
		t.Errorf("%s: want one FROM \"measurement\":\n%s", name, q)
		return
	}
	measurement := q[from[0][2]:from[0][3]]
	fields, ok := schemaFields()[measurement]
	if !ok {
		t.Errorf("%s: measurement %q is not in the schema", name, measurement)
	}
	selected, rest := q[:from[0][0]], q[from[0][1]:]
	for _, re := range regexLiteral.FindAllString(selected, -1) {
		if re != "/^errors_/" || measurement != "llm_interval" {
			t.Errorf("%s: fields %s of %s: only llm_interval's errors_<class> are selected by a regex", name, re, measurement)
		}
	}
	for _, m := range quotedIdent.FindAllStringSubmatch(selected, -1) {
		if m[1] == "" && !slices.Contains(fields, m[2]) {
			t.Errorf("%s: field %q is not a field of %s in the schema", name, m[2], measurement)
		}
	}
	rest = regexLiteral.ReplaceAllString(rest, "//")
	for _, m := range quotedIdent.FindAllStringSubmatch(rest, -1) {
		if !slices.Contains(schemaTags, m[2]) && m[2] != tagKeyVariable {
			t.Errorf("%s: %q is no tag of the schema", name, m[2])
		}
	}
	bare := quotedIdent.ReplaceAllString(regexLiteral.ReplaceAllString(q, "//"), "")
	for _, w := range bareWord.FindAllString(bare, -1) {
		if !slices.Contains(influxQLWords, w) {
			t.Errorf("%s: unquoted %q: name fields and tags as \"identifiers\"", name, w)
		}
	}
}

// The dashboard is valid JSON for an InfluxDB data source chosen on
// import, with the testid, model, scenario and tag variables, and each
// panel has a raw InfluxQL query of the schema's measurements, fields and
// tags, for the chosen testid, tag value and the dashboard's time range,
// that names only variables the dashboard defines.
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
		if v.Type == "query" {
			checkInfluxQL(t, "variable "+v.Name, v.Query)
		}
	}
	for _, name := range []string{"testid", "model", "scenario", "tagvalue"} {
		if !strings.HasPrefix(vars[name], "SHOW TAG VALUES FROM ") {
			t.Errorf("variable %s: %q, want SHOW TAG VALUES", name, vars[name])
		}
	}
	if want := `SHOW TAG KEYS FROM "llm_run"`; vars["tag"] != want {
		t.Errorf("variable tag: %q, want %q", vars["tag"], want)
	}
	for _, v := range d.Templating.List {
		if (v.Name == "scenario" || v.Name == "tagvalue") && (!v.IncludeAll || v.AllValue != ".*" || !v.Multi) {
			t.Errorf("variable %s: want several values or All, as .*", v.Name)
		}
	}
	defined := func(where, q string) {
		for _, m := range variableRef.FindAllStringSubmatch(q, -1) {
			if _, ok := vars[m[1]]; !ok && !slices.Contains(grafanaMacros, m[1]) {
				t.Errorf("%s: $%s is no variable of the dashboard:\n%s", where, m[1], q)
			}
		}
	}
	for _, v := range d.Templating.List {
		defined("variable "+v.Name, v.Query)
	}
	if len(panels) < 19 {
		t.Errorf("%d panels, want the 4 per-run trends, the 5 live-run panels, the 6 server panels across runs and the 4 over time", len(panels))
	}
	var measurements []string
	for _, p := range panels {
		if p.Datasource.UID != "${DS_INFLUXDB}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %+v, %d queries; want ${DS_INFLUXDB} and a query", p.Title, p.Datasource, len(p.Targets))
		}
		for _, q := range p.Targets {
			if q.Datasource.UID != "${DS_INFLUXDB}" || !q.RawQuery || q.ResultFormat != "time_series" ||
				!strings.Contains(q.Query, `"testid" = '$testid'`) || !strings.Contains(q.Query, "$timeFilter") {
				t.Errorf("panel %q: want a raw time series query of ${DS_INFLUXDB}, the testid and the time range:\n%s", p.Title, q.Query)
			}
			checkInfluxQL(t, "panel "+p.Title, q.Query)
			defined("panel "+p.Title, q.Query)
			want := []string{`"$tag"::tag =~ /^$tagvalue$/`}
			switch m := fromClause.FindStringSubmatch(q.Query); {
			case m != nil && m[1] == "llm_run":
				want = append(want, `"model" =~ /^$model$/`, `("scenario" = '' OR "scenario" =~ /^$scenario$/)`)
			case m != nil && strings.HasPrefix(m[1], "llm_server"):
				want = append(want, `"model" =~ /^$model$/`)
			}
			for _, w := range want {
				if !strings.Contains(q.Query, w) {
					t.Errorf("panel %q: the query does not filter by %s:\n%s", p.Title, w, q.Query)
				}
			}
			if m := fromClause.FindStringSubmatch(q.Query); m != nil {
				measurements = append(measurements, m[1])
			}
		}
	}
	for _, m := range []string{"llm_run", "llm_interval", "llm_server", "llm_server_series"} {
		if !slices.Contains(measurements, m) {
			t.Errorf("no panel reads %s", m)
		}
	}
}

// serverPoints are the llm_server points of each run, as a run that
// scraped a vLLM server and a DCGM exporter of one GPU stores them (the
// section's, each target's and the GPU's), and the first run's
// llm_server_series points, all in one 10 s window.
func serverPoints(runs []historyRun, now time.Time) []*write.Point {
	var pts []*write.Point
	for _, r := range runs {
		start := now.Add(-r.age)
		tags := func(kv ...string) map[string]string {
			m := map[string]string{"run_id": r.runID, "testid": r.testid, "model": r.model, r.tag[0]: r.tag[1]}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			return m
		}
		server := tags("target", "http://gpu-1:8000/metrics", "kind", "server", "engine", "vllm")
		gpu := tags("target", "http://gpu-1:9400/metrics", "kind", "gpu", "engine", "dcgm")
		pts = append(pts,
			influxdb2.NewPoint("llm_server", tags("target", "_all"), map[string]any{"targets": int64(2), "energy_joules": 1000.0, "joules_per_output_token": 0.2}, start),
			influxdb2.NewPoint("llm_server", server, map[string]any{"running_mean": 7.5, "running_max": 8.0, "waiting_mean": 0.5, "waiting_max": 3.0,
				"kv_cache_usage_mean": 0.4, "kv_cache_usage_max": 0.9, "preemptions_delta": 0.0, "scrapes_ok": int64(60)}, start),
			influxdb2.NewPoint("llm_server", gpu, map[string]any{"gpu_utilization_mean": 0.7, "gpu_utilization_max": 1.0, "gpu_power_mean": 300.0,
				"gpu_power_max": 400.0, "gpus": int64(1)}, start),
			influxdb2.NewPoint("llm_server", tags("target", "http://gpu-1:9400/metrics", "kind", "gpu", "engine", "dcgm", "gpu", "0"),
				map[string]any{"gpu_utilization_mean": 0.7, "gpu_utilization_max": 1.0, "gpu_power_mean": 300.0, "gpu_power_max": 400.0}, start))
		if r.age != 0 {
			continue
		}
		window := now.Truncate(10 * time.Second)
		for i := range 4 {
			at := window.Add(time.Duration(i) * 2 * time.Second)
			pts = append(pts,
				influxdb2.NewPoint("llm_server_series", server, map[string]any{"running": 8.0, "waiting": float64(i), "kv_cache_usage": 0.5}, at),
				influxdb2.NewPoint("llm_server_series", gpu, map[string]any{"gpu_utilization": 0.9, "gpu_power_watts": 350.0}, at))
		}
	}
	return pts
}

// grafanaRegex formats a value as Grafana does a variable with All in a
// regex: regular expression characters and the slash escaped.
func grafanaRegex(v string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(v), "/", `\/`)
}

// grafanaVariables replaces Grafana's macros and the dashboard's
// variables as Grafana does: $timeFilter by the range from-to in epoch
// milliseconds, $__interval by 10s, and each $name of vars by its value
// (for a variable in a regex, grafanaRegex of its value, or ".*" for
// All); a longer name first, so that $tagvalue is not $tag's.
func grafanaVariables(from, to time.Time, vars map[string]string) *strings.Replacer {
	names := slices.SortedFunc(maps.Keys(vars), func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	pairs := []string{"$timeFilter", fmt.Sprintf("time >= %dms and time <= %dms", from.UnixMilli(), to.UnixMilli()), "$__interval", "10s"}
	for _, n := range names {
		pairs = append(pairs, "$"+n, vars[n])
	}
	return strings.NewReplacer(pairs...)
}

// influxQLRows runs a statement on the server's database and returns its
// rows, by column name (and the series' tags by name), across series; it
// fails t when the server reports an error.
func influxQLRows(t *testing.T, s *influxtest.Server, name, stmt string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := s.InfluxQL(ctx, stmt)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return nil
	}
	var answer struct {
		Results []struct {
			Series []struct {
				Tags    map[string]string
				Columns []string
				Values  [][]any
			}
		}
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Errorf("%s: %v: %s", name, err, body)
		return nil
	}
	var rows []map[string]any
	for _, r := range answer.Results {
		for _, se := range r.Series {
			for _, vs := range se.Values {
				row := map[string]any{}
				for k, v := range se.Tags {
					row[k] = v
				}
				for i, c := range se.Columns {
					row[c] = vs[i]
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// dashboardCase is a choice of the dashboard's variables, and the rows
// each kind of panel finds with it: across runs (llm_run), per scenario
// (llm_interval's scenarios), run-wide (llm_interval's _all), the
// server's across runs (llm_server) and over time (llm_server_series);
// -1: some, -2: not checked.
type dashboardCase struct {
	name                        string
	vars                        map[string]string
	perRun, perScenario, runAll int
	server, serverSeries        int
}

// checkPanels runs every panel's query with each case's variables on the
// server, over the time range from-to, and fails t when one finds other
// rows than the case wants.
func checkPanels(t *testing.T, s *influxtest.Server, panels []dashboardPanel, from, to time.Time, cases []dashboardCase) {
	t.Helper()
	for _, c := range cases {
		for _, p := range panels {
			for _, q := range p.Targets {
				want := c.runAll
				switch {
				case strings.Contains(q.Query, `"llm_server"`):
					want = c.server
				case strings.Contains(q.Query, `"llm_server_series"`):
					want = c.serverSeries
				case strings.Contains(q.Query, `"llm_run"`):
					want = c.perRun
				case strings.Contains(q.Query, `"scenario" != '_all'`):
					want = c.perScenario
				}
				stmt := grafanaVariables(from, to, c.vars).Replace(q.Query)
				rows := influxQLRows(t, s, "panel "+p.Title, stmt)
				if want == -1 && len(rows) == 0 || want >= 0 && len(rows) != want {
					t.Errorf("%s: panel %q: %d rows, want %d (-1: some):\n%s", c.name, p.Title, len(rows), want, stmt)
				}
			}
		}
	}
}

// variableValues runs the variable's query with vars and returns the
// values it offers (SHOW TAG VALUES' value, SHOW TAG KEYS' tagKey).
func variableValues(t *testing.T, s *influxtest.Server, query string, vars map[string]string) []any {
	t.Helper()
	var values []any
	for _, r := range influxQLRows(t, s, "variable", grafanaVariables(time.Time{}, time.Time{}, vars).Replace(query)) {
		values = append(values, cmp.Or(r["value"], r["tagKey"]))
	}
	return values
}

// The dashboard's queries run on a real server (InfluxDB 1.8, Flux off)
// with the values Grafana would put in: each finds the points planted,
// the across-runs panels one per run for the whole run and one per chosen
// scenario, of the chosen model or All, none of another model, and none
// of another tag value; the variables list the testid, the model, the
// scenarios and the tag.
func TestDashboardQueries(t *testing.T) {
	d, panels := readDashboard(t)
	s := influxtest.Start(t)
	now := time.Now().Add(-time.Minute).Truncate(time.Second)
	const testid, model = "dash", "meta/llama-3.1-8b"
	var runs []historyRun
	for i := range 3 {
		runs = append(runs, historyRun{testid: testid, model: model, runID: fmt.Sprintf("d%d", i), age: time.Duration(i) * 24 * time.Hour, ttftP99: 100,
			scenarios: []string{"chat", "rag"}, tag: [2]string{"env", "staging"}})
	}
	pts := historyPoints(runs, now)
	for i := range 4 {
		at := now.Add(time.Duration(i) * 5 * time.Second)
		all := map[string]string{"run_id": "d0", "testid": testid, "scenario": "_all", "env": "staging"}
		pts = append(pts,
			influxdb2.NewPoint("llm_interval", all, map[string]any{"requests": int64(10), "failed": int64(1), "req_per_s": 2.0,
				"output_tok_per_s": 400.0, "active_vus": int64(8), "errors_timeout": int64(1)}, at),
			influxdb2.NewPoint("llm_interval", map[string]string{"run_id": "d0", "testid": testid, "scenario": "chat", "env": "staging"},
				map[string]any{"requests": int64(10), "ttft_p50": 50.0, "ttft_p99": 90.0, "errors_timeout": int64(1)}, at))
	}
	pts = append(pts, serverPoints(runs, now)...)
	writePoints(t, s, pts)
	from, to := now.Add(-200*24*time.Hour), time.Now().Add(time.Hour)
	vars := func(kv ...string) map[string]string {
		m := map[string]string{"testid": testid, "model": ".*", "scenario": ".*", "tag": "env", "tagvalue": ".*"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	n := len(runs)
	checkPanels(t, s, panels, from, to, []dashboardCase{
		{"every scenario, All", vars(), 3 * n, -1, -1, n, 1},
		{"the model", vars("model", grafanaRegex(model)), 3 * n, -1, -1, n, 1},
		{"another model", vars("model", grafanaRegex("other/model")), 0, -1, -1, 0, 0},
		{"scenario rag", vars("scenario", "rag"), 2 * n, 0, -1, n, 1},
		{"scenarios chat and rag", vars("scenario", "(chat|rag)"), 3 * n, -1, -1, n, 1},
		{"the tag value", vars("tagvalue", "staging"), 3 * n, -1, -1, n, 1},
		{"another tag value", vars("tagvalue", "prod"), 0, 0, 0, 0, 0},
		{"a tag key the runs lack", vars("tag", "gpu", "tagvalue", "h100"), 0, 0, 0, 0, 0},
	})
	errorsPanel := slices.IndexFunc(panels, func(p dashboardPanel) bool { return p.Title == "Errors by class" })
	if errorsPanel < 0 {
		t.Fatal("no panel Errors by class")
	}
	rows := influxQLRows(t, s, "errors by class", grafanaVariables(from, to, vars()).Replace(panels[errorsPanel].Targets[0].Query))
	if len(rows) == 0 || rows[0]["sum_errors_timeout"] == nil {
		t.Errorf("errors by class: %v, want the sums of errors_timeout", rows)
	}
	for _, v := range d.Templating.List {
		values := variableValues(t, s, v.Query, vars())
		for _, want := range map[string][]string{"testid": {testid}, "model": {model}, "scenario": {"chat", "rag"}, "tag": {"env", "run_id"}, "tagvalue": {"staging"}}[v.Name] {
			if !slices.Contains(values, any(want)) {
				t.Errorf("variable %s: %s is not among its values %v", v.Name, want, values)
			}
		}
	}
}

// The dashboard charts what llmrun writes: with the points of a run of two
// scenarios stored through the Output (run with --tag env=ci), the
// across-runs panels chart the whole run and each chosen scenario of the
// chosen model, the live panels find points, and another tag value finds
// none; the variables offer its scenarios and its tag.
func TestDashboardOnAStoredRun(t *testing.T) {
	d, panels := readDashboard(t)
	s := influxtest.Start(t)
	start := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	const testid = "dash-stored"
	influxdb.WriteTestRun(t, s, testid, start)
	from, to := start.Add(-time.Hour), time.Now().Add(time.Hour)
	vars := func(kv ...string) map[string]string {
		m := map[string]string{"testid": testid, "model": ".*", "scenario": ".*", "tag": "env", "tagvalue": "ci"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		dashboardCase
		series []string // model/scenario of the across-runs panels' series, sorted
	}{
		{dashboardCase{"its tag value", vars(), -2, -1, -1, 1, -1}, []string{"m1,m2/", "m1/chat", "m2/batch"}},
		{dashboardCase{"scenario chat", vars("scenario", "chat"), -2, -1, -1, 1, -1}, []string{"m1,m2/", "m1/chat"}},
		{dashboardCase{"scenario batch of model m2", vars("scenario", "batch", "model", "m2"), -2, -1, -1, 0, 0}, []string{"m2/batch"}},
		{dashboardCase{"another tag value", vars("tagvalue", "prod"), 0, 0, 0, 0, 0}, nil},
	} {
		checkPanels(t, s, panels, from, to, []dashboardCase{c.dashboardCase})
		var series []string
		for _, p := range panels {
			for _, q := range p.Targets {
				if !strings.Contains(q.Query, `"llm_run"`) {
					continue
				}
				for _, r := range influxQLRows(t, s, "panel "+p.Title, grafanaVariables(from, to, c.vars).Replace(q.Query)) {
					if k := fmt.Sprintf("%v/%v", r["model"], r["scenario"]); !slices.Contains(series, k) {
						series = append(series, k)
					}
				}
			}
		}
		if slices.Sort(series); !slices.Equal(series, c.series) {
			t.Errorf("%s: the across-runs panels chart %q, want %q", c.name, series, c.series)
		}
	}
	for _, v := range d.Templating.List {
		values := variableValues(t, s, v.Query, vars())
		for _, want := range map[string][]string{"testid": {testid}, "model": {"m1", "m2", "m1,m2"}, "scenario": {"chat", "batch"}, "tag": {"env"}, "tagvalue": {"ci"}}[v.Name] {
			if !slices.Contains(values, any(want)) {
				t.Errorf("variable %s: %s is not among its values %v", v.Name, want, values)
			}
		}
	}
}
