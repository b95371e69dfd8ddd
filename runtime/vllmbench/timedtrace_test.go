package vllmbench

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/runner"
)

// arrival is a completions request as the server got it.
type arrival struct {
	at        time.Time
	maxTokens int
}

// --dataset-name timed_trace replays a Mooncake trace against the
// simulator: the first --num-prompts records, in the trace's order, at
// their timestamps scaled by --timed-trace-sec-multiplier, each prompt
// of the record's input length built from its hash ids in blocks of
// --timed-trace-chunk-hash-size tokens; the result block and file are
// vLLM's.
func TestTimedTraceReplaysAtTheTimestamps(t *testing.T) {
	t.Parallel()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	var mu sync.Mutex
	var got []arrival
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/completions" {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var req struct {
				MaxTokens int `json:"max_tokens"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			got = append(got, arrival{time.Now(), req.MaxTokens})
			mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	path := filepath.Join(t.TempDir(), "r.json")
	trace, err := filepath.Abs("testdata/timed_trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// 1 s between records in the trace, 0.5 s in the replay; one request
	// in flight, so the records reach the server in their order (records
	// that wait for it are not dropped).
	b := benchmark(t, "--dataset-name", TimedTraceDataset, "--dataset-path", trace, "--num-prompts", "5", "--max-concurrency", "1",
		"--timed-trace-chunk-hash-size", "16", "--timed-trace-sec-multiplier", "0.0005", "--ignore-eos",
		"--save-result", "--result-filename", path)
	begun := time.Now()
	outcome, stdout, stderr, err := runBenchmark(t, b, srv.URL)
	if err != nil || outcome.Verdict != runner.Passed || outcome.Summary == nil {
		t.Fatalf("outcome %+v, %v; want passed\nstdout:\n%s\nstderr:\n%s", outcome, err, stdout, stderr)
	}
	if len(got) != 5 {
		t.Fatalf("the server got %d requests, want --num-prompts' 5 of the trace's 6 records", len(got))
	}
	for i, a := range got {
		if want := 3 + i; a.maxTokens != want {
			t.Errorf("request %d asked for %d tokens, want record %d's %d: the records out of order", i+1, a.maxTokens, i+1, want)
		}
	}
	// A record starts no sooner than its scaled timestamp after the run's
	// start, which is after begun: not at once, as at --request-rate inf.
	for i, a := range got {
		if at, want := a.at.Sub(begun), time.Duration(i)*500*time.Millisecond; at < want {
			t.Errorf("record %d arrived %v after the run began, before its scaled timestamp %v", i+1, at, want)
		}
	}
	// The prompts share the blocks their hash ids say: 48 + 16 + 64 tokens
	// of the 268 hit a cache that holds the trace.
	metrics := outcome.Summary.Metrics
	if in, hits := metrics["trace_input_tokens"].Values["count"], metrics["trace_expected_cached_tokens"].Values["count"]; in != 268 || hits != 128 {
		t.Errorf("the prompts' hash blocks: %v input tokens, %v implied hits; want 268 and 128", in, hits)
	}
	// Nor are they declared unique: the cache hits they are built for
	// are no warning.
	if u := outcome.Summary.UniqueCache; u != nil {
		t.Errorf("the prompts were declared unique: %+v", u)
	}
	if !strings.Contains(stdout, " Serving Benchmark Result ") {
		t.Errorf("stdout lacks vLLM's block:\n%s", stdout)
	}
	r := readResultFile(t, path)
	if r["completed"] != 5.0 || r["total_input_tokens"] != 268.0 || r["total_output_tokens"] != 25.0 {
		t.Errorf("completed %v, input tokens %v, output tokens %v; want 5, the records' 268 and 25", r["completed"], r["total_input_tokens"], r["total_output_tokens"])
	}
}

// The timed_trace dataset's flags are checked before the run, naming the
// flag.
func TestTimedTraceFlagsRefused(t *testing.T) {
	t.Parallel()
	trace := "testdata/timed_trace.jsonl"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset-name", TimedTraceDataset}, "--dataset-name timed_trace needs --dataset-path"},
		{[]string{"--dataset-name", TimedTraceDataset, "--dataset-path", trace, "--timed-trace-chunk-hash-size", "0"}, "--timed-trace-chunk-hash-size must be at least 1, got 0"},
		{[]string{"--dataset-name", TimedTraceDataset, "--dataset-path", trace, "--timed-trace-sec-multiplier", "0"}, "--timed-trace-sec-multiplier must be a positive number, got 0"},
		{[]string{"--dataset-name", TimedTraceDataset, "--dataset-path", trace, "--request-rate", "4"}, "--request-rate 4: cannot be used with --dataset-name timed_trace"},
		{[]string{"--dataset-name", TimedTraceDataset, "--dataset-path", trace, "--num-warmups", "2"}, "--num-warmups: cannot be used with --dataset-name timed_trace"},
	} {
		fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
		c := AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Benchmark(fs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}
