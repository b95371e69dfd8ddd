package influxdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"

	"github.com/llmrun/llmrun/internal/influxtest"
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
	return map[string][]string{
		"llm_request": {"ttft", "ttfo", "tpot", "e2e", "itl_mean", "itl_p99", "output_tokens", "input_tokens", "cached_tokens",
			"reasoning_tokens", "ok", "status", "error_class"},
		"llm_interval": {"requests", "failed", "req_per_s", "output_tok_per_s", "total_tok_per_s", "active_vus",
			"ttft_p50", "ttft_p90", "ttft_p99", "tpot_p50", "tpot_p99", "e2e_p50", "e2e_p99"},
		"llm_run_start": {"max_vus"},
		"llm_run":       run,
	}
}

// schemaTags are the tags of the schema's points that the dashboard may
// filter or group by.
var schemaTags = []string{"run_id", "testid", "model", "scenario"}

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
var influxQLWords = []string{"SELECT", "FROM", "WHERE", "AND", "GROUP", "BY", "AS", "time", "fill", "none", "mean", "max", "sum",
	"SHOW", "TAG", "VALUES", "WITH", "KEY", "$timeFilter", "$__interval"}

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
		if !slices.Contains(schemaTags, m[2]) {
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
// import, with the testid and model variables, and each panel has a raw
// InfluxQL query of the schema's measurements, fields and tags, for the
// chosen testid and the dashboard's time range.
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
	if !strings.HasPrefix(vars["testid"], "SHOW TAG VALUES") || !strings.HasPrefix(vars["model"], "SHOW TAG VALUES") {
		t.Errorf("variables %v: want testid and model, each of SHOW TAG VALUES", vars)
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
			if q.Datasource.UID != "${DS_INFLUXDB}" || !q.RawQuery || q.ResultFormat != "time_series" ||
				!strings.Contains(q.Query, `"testid" = '$testid'`) || !strings.Contains(q.Query, "$timeFilter") {
				t.Errorf("panel %q: want a raw time series query of ${DS_INFLUXDB}, the testid and the time range:\n%s", p.Title, q.Query)
			}
			checkInfluxQL(t, "panel "+p.Title, q.Query)
			if m := fromClause.FindStringSubmatch(q.Query); m != nil {
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

// grafanaRegex formats a value as Grafana does a variable with All in a
// regex: regular expression characters and the slash escaped.
func grafanaRegex(v string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(v), "/", `\/`)
}

// grafanaMacros replaces Grafana's macros and the variables as Grafana
// does: $timeFilter by the range from-to in epoch milliseconds,
// $__interval by 10s, $testid by testid and $model by the regex of model
// (".*" for All).
func grafanaMacros(from, to time.Time, testid, modelRegex string) *strings.Replacer {
	return strings.NewReplacer("$timeFilter", fmt.Sprintf("time >= %dms and time <= %dms", from.UnixMilli(), to.UnixMilli()),
		"$__interval", "10s", "$testid", testid, "$model", modelRegex)
}

// influxQLRows runs a statement on the server's database and returns its
// rows, by column name, across series; it fails t when the server reports
// an error.
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
				for i, c := range se.Columns {
					row[c] = vs[i]
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// The dashboard's queries run on a real server (InfluxDB 1.8, Flux off)
// with the values Grafana would put in: each finds the points planted,
// the across-runs panels one per run (whole-run points only) of the chosen
// model or All, none of another model, and the variables list the testid
// and the model.
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
	writePoints(t, s, pts)
	from, to := now.Add(-200*24*time.Hour), time.Now().Add(time.Hour)
	for _, p := range panels {
		for _, q := range p.Targets {
			perRun := strings.Contains(q.Query, `"llm_run"`)
			for _, c := range []struct {
				model string
				want  int // rows, or -1: some
			}{{grafanaRegex(model), -1}, {".*", -1}, {grafanaRegex("other/model"), 0}} {
				if perRun && c.want == -1 {
					c.want = len(runs)
				}
				stmt := grafanaMacros(from, to, testid, c.model).Replace(q.Query)
				rows := influxQLRows(t, s, "panel "+p.Title, stmt)
				if c.want == -1 && len(rows) == 0 || c.want >= 0 && len(rows) != c.want {
					t.Errorf("panel %q with model /%s/: %d rows, want %d (-1: some):\n%s", p.Title, c.model, len(rows), c.want, stmt)
				}
				if !strings.Contains(q.Query, "$model") {
					break
				}
			}
		}
	}
	errorsPanel := slices.IndexFunc(panels, func(p dashboardPanel) bool { return p.Title == "Errors by class" })
	if errorsPanel < 0 {
		t.Fatal("no panel Errors by class")
	}
	rows := influxQLRows(t, s, "errors by class", grafanaMacros(from, to, testid, ".*").Replace(panels[errorsPanel].Targets[0].Query))
	if len(rows) == 0 || rows[0]["sum_errors_timeout"] == nil {
		t.Errorf("errors by class: %v, want the sums of errors_timeout", rows)
	}
	for _, v := range d.Templating.List {
		want := map[string]string{"testid": testid, "model": model}[v.Name]
		var values []any
		for _, r := range influxQLRows(t, s, "variable "+v.Name, grafanaMacros(from, to, testid, ".*").Replace(v.Query)) {
			values = append(values, r["value"])
		}
		if !slices.Contains(values, any(want)) {
			t.Errorf("variable %s: %s is not among its values %v", v.Name, want, values)
		}
	}
}
