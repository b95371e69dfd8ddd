package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// influxCount runs an InfluxQL COUNT and returns its value.
func influxCount(t *testing.T, s *influxtest.Server, stmt string) int {
	t.Helper()
	row := influxRow(t, s, stmt)
	if len(row) == 0 {
		return 0
	}
	return int(row[0])
}

// influxRow runs an InfluxQL query and returns the numbers of its first
// row, after the time (NaN for a column that is not a number); nil when it
// has none.
func influxRow(t *testing.T, s *influxtest.Server, stmt string) []float64 {
	t.Helper()
	out, err := s.InfluxQL(context.Background(), stmt)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Results []struct {
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if len(resp.Results) == 0 || len(resp.Results[0].Series) == 0 {
		return nil
	}
	var row []float64
	for _, v := range resp.Results[0].Series[0].Values[0][1:] {
		n, ok := v.(float64)
		if !ok {
			n = math.NaN()
		}
		row = append(row, n)
	}
	return row
}

// A run with --out influxdb stores every request, the periodic aggregates
// and the run's summary point, tagged with the test ID and --tags, and its
// summary says how many points it wrote.
func TestRunWritesToInfluxDB(t *testing.T) {
	t.Parallel()
	db := influxtest.Start(t)
	url := startSim(t, llmsim.DefaultConfig())
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 8))
	export := filepath.Join(t.TempDir(), "summary.json")
	env := map[string]string{"LLMRUN_INFLUXDB_TOKEN": db.Token}
	code, stdout, stderr := cli(t, context.Background(), env, "run", "--no-color", "-u", "4", "-i", "40", "--base-url", url,
		"--out", "influxdb="+db.URL+"?bucket="+db.Bucket+"&interval=1s", "--testid", "nightly-chat", "--tag", "env=ci",
		"--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	if len(s.Outputs) != 1 || s.Outputs[0].Dropped != 0 || s.Outputs[0].Written < 42 {
		t.Fatalf("outputs %+v", s.Outputs)
	}
	if s.Meta.TestID != "nightly-chat" || len(s.Meta.RunID) != 16 || s.Meta.Tags["env"] != "ci" {
		t.Errorf("meta %+v", s.Meta)
	}
	where := fmt.Sprintf(`WHERE run_id = '%s' AND testid = 'nightly-chat' AND env = 'ci'`, s.Meta.RunID)
	if n := influxCount(t, db, `SELECT COUNT(e2e) FROM llm_request `+where); n != 40 {
		t.Errorf("%d llm_request points, want 40", n)
	}
	if n := influxCount(t, db, `SELECT COUNT(completed) FROM llm_run `+where); n != 1 {
		t.Errorf("%d llm_run points, want 1", n)
	}
	if !strings.Contains(stdout, "points written, 0 dropped") || strings.Contains(stdout+stderr, db.Token) {
		t.Errorf("summary:\n%s\n%s", stdout, stderr)
	}
	// The run point carries the figures' intervals, for trend to judge
	// changes against the noise.
	row := influxRow(t, db, `SELECT ci_level, ttft_p50_ci_lo, ttft_p50, ttft_p50_ci_hi, ttft_count, ttft_p99_ci_hi FROM llm_run `+where)
	if len(row) != 6 || row[0] != 0.99 || !(row[1] < row[2] && row[2] < row[3]) || row[4] != 40 || !math.IsNaN(row[5]) {
		t.Errorf("llm_run's ci_level, ttft_p50 with its interval, ttft_count, ttft_p99_ci_hi: %v; want 0.99, lo < p50 < hi, 40, none (40 requests bound no p99)", row)
	}
	// A second run of the same test: trend judges it against the first,
	// on figures whose verdict no timing of this machine moves: a p99 40
	// requests do not bound, a success rate of 100 % both times.
	code, stdout, stderr = cli(t, context.Background(), env, "run", "-q", "-u", "4", "-i", "40", "--base-url", url,
		"--out", "influxdb="+db.URL+"?bucket="+db.Bucket, "--testid", "nightly-chat", script)
	if code != exitcode.OK {
		t.Fatalf("second run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = cli(t, context.Background(), env, "trend", "--no-color", "--influxdb", db.URL+"?bucket="+db.Bucket, "--testid", "nightly-chat",
		"--metric", "ttft_p99,success_rate")
	if code != exitcode.OK || !strings.Contains(stdout, "2 runs") || !strings.Contains(trendLine(stdout, "ttft_p99"), "inconclusive (too few samples)") ||
		!strings.Contains(stdout, "ttft_p99 inconclusive: too few samples: 40 requests cannot bound a p99 at 99 % confidence: it takes 528") {
		t.Errorf("trend of the two runs: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// A token InfluxDB refuses stops the run before it starts, with an error
// that says where the token comes from and never shows it.
func TestRunRefusedInfluxToken(t *testing.T) {
	t.Parallel()
	db := influxtest.Start(t)
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 2))
	env := map[string]string{"LLMRUN_INFLUXDB_TOKEN": influxtest.User + ":not-the-password"}
	code, stdout, stderr := cli(t, context.Background(), env, "run", "-q", "-i", "1",
		"--out", "influxdb="+db.URL+"?bucket="+db.Bucket, script)
	if code != exitcode.Error || !strings.Contains(stderr, "LLMRUN_INFLUXDB_TOKEN") || strings.Contains(stdout+stderr, "not-the-password") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if code, _, stderr := cli(t, context.Background(), nil, "run", "-q", "--out", "influxdb=http://u:p@127.0.0.1:1", script); code != exitcode.Usage || !strings.Contains(stderr, "no credentials in the URL") {
		t.Errorf("credentials in the URL: exit %d, %s", code, stderr)
	}
	if code, _, stderr := cli(t, context.Background(), nil, "run", "-q", "--out", "kafka=x", script); code != exitcode.Usage || !strings.Contains(stderr, "influxdb") {
		t.Errorf("an unknown output: exit %d, %s", code, stderr)
	}
}

// An instance of a distributed run tags its points with its index.
func TestInstanceTagsInfluxPoints(t *testing.T) {
	t.Parallel()
	db := influxtest.Start(t)
	script := writeScript(t, "instance.js", instanceScript)
	export := filepath.Join(t.TempDir(), "summary.json")
	env := map[string]string{"LLMRUN_INFLUXDB_TOKEN": db.Token, "LLMRUN_INSTANCES": "1", "JOB_COMPLETION_INDEX": "0"}
	code, stdout, stderr := cli(t, context.Background(), env, "run", "-q", "--out", "influxdb="+db.URL+"?bucket="+db.Bucket, "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	where := fmt.Sprintf(`WHERE run_id = '%s' AND instance = '0'`, s.Meta.RunID)
	// The one instance runs the whole plan: instanceScript's 9 iterations.
	if n := influxCount(t, db, `SELECT COUNT(e2e) FROM llm_request `+where); n != 9 {
		t.Errorf("%d llm_request points tagged instance 0, want 9", n)
	}
	if n := influxCount(t, db, `SELECT COUNT(completed) FROM llm_run `+where); n != 1 {
		t.Errorf("%d llm_run points tagged instance 0, want 1", n)
	}
}

// An InfluxDB that echoes the credentials in its 401, with a terminal
// escape sequence around them, has neither printed by run --out influxdb,
// trend or merge --influxdb: the token (as is, and a user:password's
// password and Basic pair) is redacted and the escape shown as \x1b. The
// answer is InfluxDB 2.x's error JSON ({"code","message"}, also what /query
// answers there), with 1.8's "error" beside it.
func TestInfluxSecretsEchoedAreRedacted(t *testing.T) {
	t.Parallel()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		said := "\x1b[31mbad auth: " + r.Header.Get("Authorization") + "\x1b[0m"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]string{"code": "unauthorized", "message": said, "error": said})
	}))
	t.Cleanup(echo.Close)
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 2))
	url := echo.URL + "?bucket=llmrun"
	for _, tc := range []struct {
		name, token string
		leaks       []string
	}{
		{"token", "plaintoken123SECRET", []string{"plaintoken123SECRET"}},
		{"user:password", "llmuser:BasicPassw0rdSECRET", // sent as Token user:password, or Basic
			[]string{"BasicPassw0rdSECRET", base64.StdEncoding.EncodeToString([]byte("llmuser:BasicPassw0rdSECRET"))}},
	} {
		env := map[string]string{"LLMRUN_INFLUXDB_TOKEN": tc.token}
		for _, args := range [][]string{
			{"run", "-q", "-i", "1", "--out", "influxdb=" + url, script},
			{"trend", "--no-color", "--influxdb", url, "--testid", "nightly"},
			{"merge", "--influxdb", url, "--run-id", "some-run"},
		} {
			code, stdout, stderr := cli(t, t.Context(), env, args...)
			out := stdout + stderr
			if code == exitcode.OK || !strings.Contains(out, `\x1b[31mbad auth: `) || !strings.Contains(out, " [REDACTED]") {
				t.Errorf("%s, %s: exit %d, want a failure quoting the server, redacted\n%s", tc.name, args[0], code, out)
			}
			for _, leak := range append(tc.leaks, "\x1b") {
				if strings.Contains(out, leak) {
					t.Errorf("%s, %s: the output holds %q\n%s", tc.name, args[0], leak, out)
				}
			}
		}
	}
}
