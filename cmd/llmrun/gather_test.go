package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/results"
)

// resultJSON is a result file as generic JSON, without "outputs": what
// the outputs reported of their writes is not known when a run stores its
// result in InfluxDB.
func resultJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	delete(m, "outputs")
	return m
}

// runInstances runs n instances, each a process given args(index,
// rendezvous address), and fails the test unless they all exit 0.
func runInstances(t *testing.T, ctx context.Context, n int, args func(int, string) []string) {
	t.Helper()
	procs := []*instanceProcess{startInstance(t, ctx, nil, args(0, "127.0.0.1:0")...)}
	addr := procs[0].await(t, ctx, listeningAt)[1]
	for i := 1; i < n; i++ {
		procs = append(procs, startInstance(t, ctx, nil, args(i, addr)...))
	}
	for i, p := range procs {
		if code, stderr := p.wait(); code != 0 {
			t.Fatalf("instance %d exited %d:\n%s", i, code, stderr)
		}
	}
}

// Three instances of one run, each writing to InfluxDB, are gathered
// back from it: merge --influxdb --run-id gives what merge gives of their
// result files, trend shows them as one run with the merged figures, a
// missing instance is reported as the file merge reports it, and a
// result missing a chunk is an error that names its instance.
func TestGatherRunFromInfluxDB(t *testing.T) {
	db := influxtest.Start(t)
	// The instances are processes of their own: they read the token from
	// the environment.
	t.Setenv(influxdb.TokenEnv, db.Token)
	env := map[string]string{influxdb.TokenEnv: db.Token}
	url := db.URL + "?bucket=" + db.Bucket
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	script := writeScript(t, "instance.js", instanceScript)
	result := func(i int) string { return filepath.Join(dir, fmt.Sprintf("instance%d.json", i)) }
	args := func(i int, addr string) []string {
		return []string{"--instances", "3", "--instance", strconv.Itoa(i), "--rendezvous", addr, "--seed", "7", "--testid", "spread",
			"--summary-export", result(i), "--out", "influxdb=" + url, script}
	}
	runInstances(t, ctx, 3, args)
	runID := readSummary(t, result(0)).Meta.RunID
	fromFiles, err := readMerged(t, result(0), result(1), result(2))
	if err != nil {
		t.Fatal(err)
	}

	if n := influxCount(t, db, fmt.Sprintf(`SELECT COUNT(instances) FROM llm_run WHERE run_id = '%s' AND instances = 3`, runID)); n != 3 {
		t.Errorf("%d llm_run points say the run had 3 instances, want each instance's", n)
	}

	// trend: one run of three instances, whose figures are those of the
	// merged result, the whole plan's 9 requests.
	code, stdout, stderr := cli(t, ctx, env, "trend", "--no-color", "--influxdb", url, "--testid", "spread")
	if code != exitcode.OK || !strings.Contains(stdout, "testid spread, whole runs: 1 run,") ||
		!strings.Contains(stdout, "run "+runID+": 3 instances, figures of their results merged") {
		t.Errorf("trend: exit %d\n%s\n%s\nwant one run of 3 instances", code, stdout, stderr)
	}
	// Its server figures are those of the merged result: instance 0 read
	// the simulator it started, which its llm_server points hold too.
	if s := readSummary(t, result(0)); s.Server == nil || s.Server.Targets[0].PrefixCacheHitRate == nil {
		t.Fatalf("instance 0 read no server: %+v", s.Server)
	}
	if line := trendLine(stdout, "server_prefix_cache_hit_rate"); !strings.Contains(stdout, "the server's figures, newest run first") || !strings.Contains(line, "no history") {
		t.Errorf("trend of one run of instances: the server's hit rate %q, want it shown with no history\n%s", line, stdout)
	}
	cfg, err := influxdb.ParseConfig(url, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	records, err := influxdb.History(ctx, cfg, influxdb.Filter{TestID: "spread", Runs: 10, Since: time.Hour})
	if err != nil || len(records) != 1 || !slices.Equal(records[0].Instances, []string{"0", "1", "2"}) {
		t.Fatalf("history: %+v, %v; want one run of instances 0, 1, 2", records, err)
	}
	gathered, _, _, err := results.GatherRun(ctx, cfg, records[0], "")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := influxdb.RunFields(readSummary(t, fromFiles), "")
	if !reflect.DeepEqual(gathered.Fields, want) || gathered.Fields["requests"] != 9 {
		t.Errorf("trend's figures of the run:\n%v\nwant those of the merged result files (9 requests):\n%v", gathered.Fields, want)
	}
	if h := regression.HealthOf(readSummary(t, fromFiles).Client); gathered.Health != h || !h.Known {
		t.Errorf("trend's client health of the run: %v %q, want that of the merged result files, every instance's limit: %v %q",
			gathered.Health, gathered.Health.Limit, h, h.Limit)
	}

	// merge --influxdb: the same result as merge of the files.
	fromInflux := filepath.Join(dir, "influx.json")
	code, _, stderr = cli(t, ctx, env, "merge", "--influxdb", url, "--run-id", runID, "-o", fromInflux)
	if code != exitcode.OK {
		t.Fatalf("merge --influxdb: exit %d\n%s", code, stderr)
	}
	if got, want := resultJSON(t, fromInflux), resultJSON(t, fromFiles); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("merge --influxdb:\n%s\nmerge of the files:\n%s", g, w)
	}

	// Without instance 2's result, the merge says so.
	if _, err := db.InfluxQL(ctx, fmt.Sprintf(`DELETE FROM llm_result WHERE run_id = '%s' AND instance = '2'`, runID)); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(dir, "partial.json")
	code, _, stderr = cli(t, ctx, env, "merge", "--influxdb", url, "--run-id", runID, "-o", partial)
	if code != exitcode.OK || !strings.Contains(stderr, "no result of instance 2 was stored in InfluxDB") {
		t.Errorf("merge --influxdb without instance 2: exit %d, stderr %q; want a warning naming instance 2", code, stderr)
	}
	if m := readSummary(t, partial); !slices.Equal(m.Meta.MissingInstances, []int{2}) || m.Meta.Instances != 3 {
		t.Errorf("partial merge: %d instances, missing %v; want 3, [2]", m.Meta.Instances, m.Meta.MissingInstances)
	}
	// With instance 0's llm_run point alone, trend still knows the run
	// had three instances.
	if _, err := db.InfluxQL(ctx, fmt.Sprintf(`DELETE FROM llm_run WHERE run_id = '%s' AND instance != '0'`, runID)); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = cli(t, ctx, env, "trend", "--no-color", "--influxdb", url, "--testid", "spread")
	if code != exitcode.OK || !strings.Contains(stdout, "3 instances, figures of their results merged (instance 2 missing") {
		t.Errorf("trend without instance 2: exit %d\n%s\nwant it named missing", code, stdout)
	}

	// Instance 1's only point now says its result has two chunks: the
	// second is missing.
	client := influxdb2.NewClient(db.URL, db.Token)
	defer client.Close()
	start := readSummary(t, result(1)).Meta.Start
	p := influxdb2.NewPoint("llm_result", map[string]string{"run_id": runID, "testid": "spread", "instance": "1", "chunk": "0"},
		map[string]any{"chunks": int64(2)}, start)
	if err := client.WriteAPIBlocking("", db.Bucket).WritePoint(ctx, p); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli(t, ctx, env, "merge", "--influxdb", url, "--run-id", runID)
	if want := "instance 1 of run " + runID + " stored is incomplete or damaged: 1 of its 2 chunks are missing (chunk 1)"; code != exitcode.Error || !strings.Contains(stderr, want) {
		t.Errorf("merge --influxdb with a chunk missing: exit %d, stderr %q; want %d and %q", code, stderr, exitcode.Error, want)
	}
}

func TestMergeInfluxCommandLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"files and influxdb", []string{"--influxdb", "http://127.0.0.1:1", "--run-id", "x", "a.json"}, "give result files or --influxdb with --run-id, not both"},
		{"influxdb without run id", []string{"--influxdb", "http://127.0.0.1:1"}, "--influxdb needs --run-id"},
		{"run id without influxdb", []string{"--run-id", "x"}, "--run-id needs --influxdb URL"},
		{"bad url", []string{"--influxdb", "http://127.0.0.1:1?bogus=1", "--run-id", "x"}, "--influxdb: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := command(t, "merge", tc.args...)
			if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitcode.Usage, tc.want)
			}
		})
	}
}

// The run of one process, gathered from InfluxDB, is its own result:
// what merge gives of its result file.
func TestGatherSingleRunFromInfluxDB(t *testing.T) {
	t.Parallel()
	db := influxtest.Start(t)
	env := map[string]string{influxdb.TokenEnv: db.Token}
	url := db.URL + "?bucket=" + db.Bucket
	dir := t.TempDir()
	export := filepath.Join(dir, "run.json")
	script := writeScript(t, "instance.js", instanceScript)
	code, _, stderr := cli(t, t.Context(), env, "run", "-q", "--out", "influxdb="+url, "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	own := readSummary(t, export)
	// What the run stored is its result file, byte for byte, but for the
	// outputs' reports.
	cfg, err := influxdb.ParseConfig(url, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var stored []influxdb.StoredResult
	var docs [][]byte
	readDoc := func(_ influxdb.StoredResult, doc io.Reader) ([]byte, error) { return io.ReadAll(doc) }
	_, err = influxdb.ReadResults(t.Context(), cfg, own.Meta.RunID, nil, readDoc, func(r influxdb.StoredResult, doc []byte) error {
		stored, docs = append(stored, r), append(docs, doc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	withoutOutputs := *own
	withoutOutputs.Outputs = nil
	var want bytes.Buffer
	if err := withoutOutputs.WriteJSON(&want); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 || stored[0].Instance != "" || !bytes.Equal(docs[0], want.Bytes()) {
		t.Errorf("stored %d results; want the result file without its outputs, byte for byte", len(stored))
	}
	fromInflux := filepath.Join(dir, "influx.json")
	code, _, stderr = cli(t, t.Context(), env, "merge", "--influxdb", url, "--run-id", own.Meta.RunID, "-o", fromInflux)
	if code != exitcode.OK {
		t.Fatalf("merge --influxdb: exit %d\n%s", code, stderr)
	}
	fromFile, err := readMerged(t, export)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resultJSON(t, fromInflux), resultJSON(t, fromFile); !reflect.DeepEqual(got, want) {
		t.Errorf("merge --influxdb of one run differs from merge of its result file")
	}
	// Its counts and latencies are the run's own; its duration is
	// merge's, from the start and end the result file holds.
	if got := readSummary(t, fromInflux); got.Serving.Requests != own.Serving.Requests || got.Serving.OK != own.Serving.OK ||
		!reflect.DeepEqual(got.Latency, own.Latency) {
		t.Errorf("merge --influxdb of one run: %d requests, %d completed, latency %+v; want the run's own %d, %d, %+v",
			got.Serving.Requests, got.Serving.OK, got.Latency, own.Serving.Requests, own.Serving.OK, own.Latency)
	}
	code, _, stderr = cli(t, t.Context(), env, "merge", "--influxdb", url, "--run-id", "no-such-run")
	if code != exitcode.Error || !strings.Contains(stderr, "no result of run no-such-run in InfluxDB") {
		t.Errorf("merge --influxdb of an unknown run: exit %d, stderr %q", code, stderr)
	}
}
