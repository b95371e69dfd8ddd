package influxdb_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/race"
	"github.com/llmrun/llmrun/internal/refused"
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
				"ttft_p50": r.ttftP99 / 2, "tpot_p99": 12.5,
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

// writePoints writes the points to the server.
func writePoints(t *testing.T, s *influxtest.Server, pts []*write.Point) {
	t.Helper()
	client := influxdb2.NewClient(s.URL, s.Token)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.WriteAPIBlocking("", s.Bucket).WritePoint(ctx, pts...); err != nil {
		t.Fatalf("writing %d points: %v", len(pts), err)
	}
}

// plantHistory writes the runs to the server.
func plantHistory(t *testing.T, s *influxtest.Server, runs []historyRun, now time.Time) {
	t.Helper()
	writePoints(t, s, historyPoints(runs, now))
}

// historyConfig is the configuration of --influxdb s.URL?bucket=…&query,
// with the server's token.
func historyConfig(t *testing.T, s *influxtest.Server, query string) influxdb.Config {
	t.Helper()
	cfg, err := influxdb.ParseConfig(s.URL+"?bucket="+s.Bucket+query, func(k string) string {
		if k == influxdb.TokenEnv {
			return s.Token
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runIDs joins the runs' IDs, in order.
func runIDs(runs []influxdb.RunRecord) string {
	var s []string
	for _, r := range runs {
		s = append(s, r.RunID)
	}
	return strings.Join(s, ",")
}

// hostileID is a testid with what ends or escapes InfluxQL literals and
// identifiers, and what would inject a statement.
const hostileID = `it's we"ird ${x} \ id'; DROP DATABASE "llmrun"; --`

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
		{testid: hostileID, model: "llama", runID: "w1", age: day, ttftP99: 7},
	}, now)
	cfg := historyConfig(t, s, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := func(cfg influxdb.Config, f influxdb.Filter) []influxdb.RunRecord {
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

	runs := read(cfg, influxdb.Filter{TestID: "nightly", Runs: 10})
	if got := runIDs(runs); got != "r4,r3,r2,r1" {
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
	for _, k := range []string{"aborted", "version", "max_vus", "active_vus", "time", "run_id", "env", "testid"} {
		if _, ok := r.Fields[k]; ok {
			t.Errorf("field %s is not a numeric field of llm_run, but is in %v", k, r.Fields)
		}
	}

	reader := cfg
	reader.Token = "reader:p: w'x" // a password with ':', a space and a quote
	if _, err := s.InfluxQL(ctx, `CREATE USER "reader" WITH PASSWORD 'p: w\'x'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InfluxQL(ctx, `GRANT READ ON "llmrun" TO "reader"`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  influxdb.Config
		f    influxdb.Filter
		want string
	}{
		{"runs 2", cfg, influxdb.Filter{TestID: "nightly", Runs: 2}, "r4,r3"},
		{"model llama", cfg, influxdb.Filter{TestID: "nightly", Model: "llama", Runs: 10}, "r4,r2,r1"},
		{"since 1000 days", cfg, influxdb.Filter{TestID: "nightly", Runs: 10, Since: 1000 * day}, "r4,r3,r2,r1,r5"},
		{"scenario rag", cfg, influxdb.Filter{TestID: "nightly", Scenario: "rag", Runs: 10}, "r4,r2,r1"},
		{"tag env staging", cfg, influxdb.Filter{TestID: "nightly", Tags: map[string]string{"env": "staging"}, Runs: 10}, "r4,r1"},
		{"tag env staging of scenario chat", cfg, influxdb.Filter{TestID: "nightly", Scenario: "chat", Tags: map[string]string{"env": "staging"}, Runs: 10}, "r4,r1"},
		{"tags env and gpu", cfg, influxdb.Filter{TestID: "nightly", Tags: map[string]string{"env": "staging", "gpu": "h100"}, Runs: 10}, ""},
		{"no tag env", cfg, influxdb.Filter{TestID: "nightly", Tags: map[string]string{"env": ""}, Runs: 10}, "r3,r2"},
		{"a tag named as a field", cfg, influxdb.Filter{TestID: "nightly", Tags: map[string]string{"requests": "100"}, Runs: 10}, ""},
		{"a hostile tag", cfg, influxdb.Filter{TestID: "nightly", Tags: map[string]string{`e"nv' OR ''='`: "x' OR ''='"}, Runs: 10}, ""},
		{"a testid with quotes, ${, a backslash and a statement", cfg, influxdb.Filter{TestID: hostileID, Runs: 10}, "w1"},
		{"a model with quotes, a newline and OR", cfg, influxdb.Filter{TestID: "nightly", Model: "llama' OR \"model\" != '\n", Runs: 10}, ""},
		{"an unknown testid", cfg, influxdb.Filter{TestID: "none", Runs: 10}, ""},
		{"a read-only user as Basic authentication", reader, influxdb.Filter{TestID: "nightly", Runs: 10}, "r4,r3,r2,r1"},
		{"the database's default retention policy", historyConfig(t, s, "&bucket=llmrun"), influxdb.Filter{TestID: "nightly", Runs: 1}, "r4"},
		{"db and rp over the bucket", historyConfig(t, s, "&bucket=perf&db=llmrun&rp=autogen"), influxdb.Filter{TestID: "nightly", Runs: 1}, "r4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runIDs(read(tt.cfg, tt.f)); got != tt.want {
				t.Errorf("%s, want %s", got, tt.want)
			}
		})
	}
	rag := read(cfg, influxdb.Filter{TestID: "nightly", Scenario: "rag", Runs: 1})
	if len(rag) != 1 || rag[0].Scenario != "rag" || rag[0].Fields["ttft_p99"] != 106 || rag[0].Fields["output_throughput"] != 201 {
		t.Errorf("scenario rag's newest point: %+v", rag)
	}
	if rag[0].Version != "v1.2.3" || rag[0].Target != "http://gpu-1:8000/v1" {
		t.Errorf("scenario rag's newest run: version %q, target %q; want its whole-run point's", rag[0].Version, rag[0].Target)
	}

	// A miss lists what exists: the newest 20 test ids and how many more,
	// the nearest among them all.
	var many []historyRun
	for i := range 22 {
		many = append(many, historyRun{testid: fmt.Sprintf("t%02d", i), runID: fmt.Sprintf("t%02d", i), age: time.Duration(i+1) * time.Minute, ttftP99: 1})
	}
	plantHistory(t, s, many, now)
	for _, c := range []struct {
		name string
		f    influxdb.Filter
		want string
	}{
		{"a misspelt testid", influxdb.Filter{TestID: "nightyl"}, "--testid nightyl: no run has it; the test ids with runs then, newest first: " +
			"t00, t01, t02, t03, t04, t05, t06, t07, t08, t09, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19 and 5 more (did you mean --testid nightly?)"},
		{"a testid too far from any", influxdb.Filter{TestID: "benchmark-of-code"}, "t19 and 5 more"},
		{"a misspelt scenario", influxdb.Filter{TestID: "nightly", Scenario: "cht"}, "--scenario cht: no run has it; the scenarios of its runs of several scenarios " +
			"(a run of one stores only its whole run's figures): chat, rag (did you mean --scenario chat?)"},
		{"a scenario of a test without", influxdb.Filter{TestID: "other", Scenario: "chat"}, "--scenario chat: no run has one (the scenarios of its runs of several scenarios " +
			"(a run of one stores only its whole run's figures): none)"},
		{"a tag value", influxdb.Filter{TestID: "nightly", Tags: map[string]string{"gpu": "a100"}}, "--tag gpu=a100: no run has it; the values of tag gpu on its runs: gpu=h100"},
		{"values that exist apart", influxdb.Filter{TestID: "nightly", Model: "qwen", Tags: map[string]string{"gpu": "h100"}}, "none has them all together"},
	} {
		c.f.Runs, c.f.Since = 10, 365*day
		lines, err := influxdb.MissReport(ctx, cfg, c.f)
		if err != nil || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%s: %q, %v; want a line with %q", c.name, lines, err, c.want)
		}
		if c.name == "a testid too far from any" && strings.Contains(lines[0], "did you mean") {
			t.Errorf("%s: %q suggests a test id far from it", c.name, lines[0])
		}
	}
}

// A numeric field History does not know, added to llm_run later, reads
// back with the others.
func TestHistoryNewField(t *testing.T) {
	s := influxtest.Start(t)
	now := time.Now().Truncate(time.Second)
	pts := historyPoints([]historyRun{{testid: "ci", model: "m", runID: "c1", age: time.Hour, ttftP99: 100}}, now)
	pts[0].AddField("ttft_p99_ci_lo", 95.5).AddField("ttft_p99_samples", int64(1200))
	writePoints(t, s, pts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runs, err := influxdb.History(ctx, historyConfig(t, s, ""), influxdb.Filter{TestID: "ci", Runs: 1, Since: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Fields["ttft_p99_ci_lo"] != 95.5 || runs[0].Fields["ttft_p99_samples"] != 1200 || runs[0].Fields["ttft_p99"] != 100 {
		t.Errorf("runs %+v: want c1 with ttft_p99_ci_lo 95.5 and ttft_p99_samples 1200", runs)
	}
}

// answering returns the URL of a server on 127.0.0.1 that answers every
// request with status and body, body repeated until it is at least size
// bytes long.
func answering(t *testing.T, status int, body string, size int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		for n := 0; n == 0 || n < size; n += len(body) {
			if _, err := io.WriteString(w, body); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// History's errors name the server's URL, quote what it said, say what to
// fix, and never show the token.
func TestHistoryErrors(t *testing.T) {
	s := influxtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	with := func(query string, f func(*influxdb.Config)) influxdb.Config {
		cfg := historyConfig(t, s, query)
		f(&cfg)
		return cfg
	}
	gone, proxy, huge := refused.URL(t), answering(t, http.StatusBadGateway, "<html><body>502 Bad Gateway</body></html>", 0),
		answering(t, http.StatusOK, strings.Repeat(" ", 1<<16), 65<<20)
	tests := []struct {
		name string
		cfg  influxdb.Config
		want []string
	}{
		{"a wrong password", with("", func(c *influxdb.Config) { c.Token = "llmrun:wrong-secret" }),
			[]string{s.URL, "the token was refused", "HTTP 401 Unauthorized", `"authorization failed"`, influxdb.TokenEnv, "user:password"}},
		{"a token 1.8 cannot parse", with("", func(c *influxdb.Config) { c.Token = "opaque-secret" }),
			[]string{s.URL, "the token was refused", "HTTP 401", "unable to parse authentication credentials", influxdb.TokenEnv}},
		{"no token", with("", func(c *influxdb.Config) { c.Token = "" }),
			[]string{s.URL, "the server wants a token", "HTTP 401", influxdb.TokenEnv}},
		{"an unknown database", with("&bucket=nodb/autogen", func(*influxdb.Config) {}),
			[]string{s.URL, `database "nodb" not found`, "database not found: nodb", "db=", "DBRP"}},
		{"an unknown db option", with("&db=nodb", func(*influxdb.Config) {}),
			[]string{s.URL, `database "nodb" not found`}},
		{"an unknown retention policy", with("&bucket=llmrun/norp", func(*influxdb.Config) {}),
			[]string{s.URL, `retention policy "norp" of database "llmrun" not found`, "retention policy not found: norp", "rp="}},
		{"nothing listening", with("", func(c *influxdb.Config) { c.URL = gone }),
			[]string{gone, "unreachable", "connection refused"}},
		{"a proxy's error page", with("", func(c *influxdb.Config) { c.URL = proxy }),
			[]string{proxy, `the query of database "llmrun" failed`, "HTTP 502 Bad Gateway", "<html><body>502 Bad Gateway"}},
		{"an answer over 64 MiB", with("", func(c *influxdb.Config) { c.URL = huge }),
			[]string{huge, "larger than 64 MiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if race.Enabled && tt.cfg.URL == huge {
				t.Skip("64 MiB read by one goroutine, which the race detector takes minutes to check under load: TestHistory reads answers under it, TestHistoryErrors the cap without -race")
			}
			_, err := influxdb.History(ctx, tt.cfg, influxdb.Filter{TestID: "nightly", Runs: 10, Since: time.Hour})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "SELECT") {
				t.Errorf("%v\nshows the token or the query", err)
			}
		})
	}
}

func TestHistoryQuery(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		f    influxdb.Filter
		want string
	}{
		{"whole runs", influxdb.Filter{TestID: "nightly", Runs: 10, Since: 30 * 24 * time.Hour},
			`SELECT * FROM "llm_run" WHERE "testid" = 'nightly' AND "scenario" = '' AND time >= '2025-05-02T12:00:00Z' ORDER BY time DESC LIMIT 10`},
		{"a scenario and a model", influxdb.Filter{TestID: "t", Model: "llama-3.1-8b", Scenario: "chat", Runs: 3, Since: time.Hour},
			`SELECT * FROM "llm_run" WHERE "testid" = 't' AND "scenario" = 'chat' AND "model" = 'llama-3.1-8b' AND time >= '2025-06-01T11:00:00Z' ORDER BY time DESC LIMIT 3`},
		{"tags", influxdb.Filter{TestID: "t", Tags: map[string]string{"gpu": "h100", "env": "staging"}, Runs: 3, Since: time.Hour},
			`SELECT * FROM "llm_run" WHERE "testid" = 't' AND "scenario" = '' AND "env"::tag = 'staging' AND "gpu"::tag = 'h100' AND time >= '2025-06-01T11:00:00Z' ORDER BY time DESC LIMIT 3`},
		{"hostile values", influxdb.Filter{TestID: `it's \ "x"`, Model: "m\nx' OR ''='", Scenario: `\'`, Runs: 1, Since: time.Hour},
			`SELECT * FROM "llm_run" WHERE "testid" = 'it\'s \\ "x"' AND "scenario" = '\\\'' AND "model" = 'm\nx\' OR \'\'=\'' AND time >= '2025-06-01T11:00:00Z' ORDER BY time DESC LIMIT 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := influxdb.HistoryQuery(tt.f, now); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	got := influxdb.TagValuesQuery("scenario", map[string]string{"testid": "it's"}, time.Hour, now)
	if want := `SELECT last("requests") FROM "llm_run" WHERE "testid"::tag = 'it\'s' AND time >= '2025-06-01T11:00:00Z' GROUP BY "scenario"`; got != want {
		t.Errorf("TagValuesQuery:\ngot  %s\nwant %s", got, want)
	}
}

// The llm_run points of a run's instances, which share its run_id, are
// one run, with the instances' tags; History reads past them to return
// the runs asked for.
func TestHistoryGroupsInstances(t *testing.T) {
	t.Parallel()
	s := influxtest.Start(t)
	now := time.Now()
	point := func(runID, instance string, age time.Duration) *write.Point {
		tags := map[string]string{"run_id": runID, "testid": "spread"}
		if instance != "" {
			tags["instance"] = instance
		}
		return influxdb2.NewPoint("llm_run", tags, map[string]any{"requests": int64(3), "version": "v1"}, now.Add(-age))
	}
	writePoints(t, s, []*write.Point{
		point("newest", "", time.Minute),
		point("spread", "2", 2*time.Minute), point("spread", "0", 2*time.Minute), point("spread", "1", 2*time.Minute),
		point("older", "", 3*time.Minute), point("oldest", "", 4*time.Minute),
	})
	runs, err := influxdb.History(context.Background(), historyConfig(t, s, ""), influxdb.Filter{TestID: "spread", Runs: 3, Since: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got := runIDs(runs); got != "newest,spread,older" {
		t.Fatalf("runs %s, want newest,spread,older", got)
	}
	if got := strings.Join(runs[1].Instances, ","); got != "0,1,2" || runs[0].Instances != nil || runs[2].Instances != nil {
		t.Errorf("instances %q, %q, %q; want none, 0,1,2, none", runs[0].Instances, got, runs[2].Instances)
	}
}

func TestRunRecordDistributed(t *testing.T) {
	tests := []struct {
		name      string
		instances []string
		field     float64
		want      bool
	}{
		{"a run of one process", nil, 0, false},
		{"a run of one instance", []string{"0"}, 0, false},
		{"instances' points", []string{"0", "1"}, 3, true},
		{"one instance's point of three", []string{"0"}, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := influxdb.RunRecord{Instances: tt.instances, Fields: map[string]float64{}}
			if tt.field != 0 {
				r.Fields["instances"] = tt.field
			}
			if got := r.Distributed(); got != tt.want {
				t.Errorf("Distributed() = %v, want %v", got, tt.want)
			}
		})
	}
}
