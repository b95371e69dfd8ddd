package runner_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/runner"
)

// replayScript replays the trace at path, logging each record it
// replays, with one request of the record's lengths.
func replayScript(path string) string {
	return fmt.Sprintf(`
import llm from 'llm';
export const options = { scenarios: { replay: { executor: 'trace-replay', trace: %q, speed: 4, preAllocatedVUs: 8, maxVUs: 30 } } };
export default function (data, record) {
  console.log(`+"`replayed ${record.index} ${record.fields.user} ${record.hashIds.length}`"+`);
  llm.stream({ messages: [{ role: 'user', content: 'token '.repeat(record.inputTokens) }], max_tokens: record.outputTokens });
}
`, path)
}

// writeReplayTrace writes a generic JSONL trace of n records 100 ms apart
// and returns its path.
func writeReplayTrace(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp_ms": %d, "input_tokens": %d, "output_tokens": 4, "hash_ids": [1, %d], "user": "u%d"}`+"\n", 5000+i*100, 20+i, i, i%3)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var replayedLine = regexp.MustCompile(`replayed (\d+) (u\d) 2`)

// replayed counts the records a run's log says it replayed, by index.
func replayed(t *testing.T, log string, into map[string]int) {
	t.Helper()
	for _, m := range replayedLine.FindAllStringSubmatch(log, -1) {
		into[m[1]]++
	}
}

// A trace replayed against the simulator sends one request per record,
// each record once, on time: within TraceEndSlack of its scaled
// timestamp on a loaded machine, as docs/executors.md says.
func TestRunReplaysATraceAgainstTheSimulator(t *testing.T) {
	const n = 24
	path := writeReplayTrace(t, n)
	var logs strings.Builder
	r := run(t, replayScript(path), func(c *runner.Config) {
		c.Engine.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	o := r.outcome
	if o.Verdict != runner.Passed || o.Summary == nil {
		t.Fatalf("outcome %+v\n%s", o, r.stderr)
	}
	if got := o.Summary.Serving.Requests; got != n {
		t.Errorf("sent %d requests, want one per record (%d)", got, n)
	}
	seen := map[string]int{}
	replayed(t, logs.String(), seen)
	for i := range n {
		if c := seen[fmt.Sprint(i)]; c != 1 {
			t.Errorf("record %d replayed %d times, want once", i, c)
		}
	}
	if d, ok := o.Summary.Metrics["dropped_iterations"]; ok && d.Values["count"] != 0 {
		t.Errorf("dropped %v iterations", d.Values["count"])
	}
	lag, ok := o.Summary.Metrics["iteration_lag"]
	if !ok || lag.Values["max"] >= 1000 {
		t.Errorf("iteration_lag %+v, want every start within a second of its scaled timestamp", lag.Values)
	}
}

// --instances 3 splits a trace exactly: each record is replayed by one
// instance.
func TestRunInstancesSplitATraceExactly(t *testing.T) {
	const n = 20
	path := writeReplayTrace(t, n)
	var logs [3]strings.Builder
	results := runInstances(t, 3, replayScript(path), func(c *runner.Config) {
		c.Engine.Logger = slog.New(slog.NewTextHandler(&logs[c.Rendezvous.Instance], nil))
	})
	seen := map[string]int{}
	var total int64
	for i, r := range results {
		if r.outcome.Verdict != runner.Passed || r.outcome.Summary == nil {
			t.Fatalf("instance %d: outcome %+v\n%s", i, r.outcome, r.stderr)
		}
		total += r.outcome.Summary.Serving.Requests
		replayed(t, logs[i].String(), seen)
	}
	if total != n || len(seen) != n {
		t.Fatalf("the instances sent %d requests for %d records, want %d", total, len(seen), n)
	}
	for i, c := range seen {
		if c != 1 {
			t.Errorf("record %s replayed %d times", i, c)
		}
	}
}
