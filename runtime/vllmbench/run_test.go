package vllmbench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/runner"
)

// countingSim starts the simulator on 127.0.0.1 and returns its URL and
// the count of the generation requests it got.
func countingSim(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	var generated atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/completions") {
			generated.Add(1)
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &generated
}

// benchmark parses args as llmrun bench's command line.
func benchmark(t *testing.T, args ...string) *Benchmark {
	t.Helper()
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	c := AddFlags(fs)
	if err := fs.Parse(ExpandMultiValued(args)); err != nil {
		t.Fatal(err)
	}
	b, err := c.Benchmark(fs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runBenchmark runs b through the library against the server at url,
// as a caller without llmrun's command line does.
func runBenchmark(t *testing.T, b *Benchmark, url string) (outcome runner.Outcome, stdout, stderr string, err error) {
	t.Helper()
	var out, errs bytes.Buffer
	outcome, err = b.Run(context.Background(), runner.Config{
		Engine:      engine.Config{LLM: llm.Config{BaseURL: url, Timeout: time.Minute}},
		NoPreflight: true, Quiet: true, Stdout: &out, Stderr: &errs,
	})
	return outcome, out.String(), errs.String(), err
}

// A benchmark run through the library, not llmrun's command line, sends
// exactly --num-prompts requests, prints vLLM's block, and saves vLLM's
// result, telling where under llmrun bench's name.
func TestBenchmarkRun(t *testing.T) {
	t.Parallel()
	url, generated := countingSim(t)
	path := filepath.Join(t.TempDir(), "r.json")
	b := benchmark(t, "--num-prompts", "4", "--max-concurrency", "2", "--random-input-len", "8", "--random-output-len", "3",
		"--metadata", "tp=1", "--save-result", "--result-filename", path)
	outcome, stdout, stderr, err := runBenchmark(t, b, url)
	if err != nil || outcome.Verdict != runner.Passed || outcome.Lost || outcome.Summary == nil {
		t.Fatalf("outcome %+v, %v; want passed\nstdout:\n%s\nstderr:\n%s", outcome, err, stdout, stderr)
	}
	if n := generated.Load(); n != 4 {
		t.Errorf("the server got %d requests, want 4", n)
	}
	if !strings.Contains(stdout, "Maximum request concurrency: 2\n") || !strings.Contains(stdout, " Serving Benchmark Result ") {
		t.Errorf("stdout lacks the traffic lines or vLLM's block:\n%s", stdout)
	}
	if want := "llmrun bench: result saved to " + path + "\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	r := readResultFile(t, path)
	if r["completed"] != 4.0 || r["model_id"] != "llmsim-1" || r["tp"] != "1" {
		t.Errorf("completed %v, model_id %v, tp %v; want 4, the server's model llmsim-1, and --metadata's 1", r["completed"], r["model_id"], r["tp"])
	}
}

// What stops a benchmark before its run sends no load: a result file
// that cannot be written is the run's error (runner.Errored, told on
// stderr), a --result-dir that cannot be made a fault of the command
// line (the error, for the caller to tell).
func TestBenchmarkRunStopsBeforeTheLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "taken.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args              []string
		verdict           runner.Verdict
		wantErr, wantTold string
	}{
		{[]string{"--result-dir", dir, "--result-filename", "taken.json"}, runner.Errored, "",
			"llmrun bench: --save-result " + filepath.Join(dir, "taken.json") + ": cannot write there: "},
		{[]string{"--result-dir", filepath.Join(file, "sub")}, runner.Passed, "--result-dir: ", ""},
	} {
		url, generated := countingSim(t)
		b := benchmark(t, append([]string{"--num-prompts", "2", "--random-input-len", "8", "--random-output-len", "2", "--save-result"}, tc.args...)...)
		outcome, _, stderr, err := runBenchmark(t, b, url)
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
		}
		if outcome.Verdict != tc.verdict || outcome.Summary != nil || !strings.Contains(stderr, tc.wantTold) {
			t.Errorf("%v: outcome %+v, stderr %q; want %v, no summary, and %q told", tc.args, outcome, stderr, tc.verdict, tc.wantTold)
		}
		if tc.wantTold != "" && !strings.HasSuffix(stderr, "; no load was sent\n") {
			t.Errorf("%v: stderr %q does not say that no load was sent", tc.args, stderr)
		}
		if n := generated.Load(); n != 0 {
			t.Errorf("%v: the server got %d requests", tc.args, n)
		}
	}
}

// --backend openai-responses sends the Responses API's requests to
// /v1/responses: each prompt as input, its output length as
// max_output_tokens; the simulator's answers are measured as vLLM's block
// reports them.
func TestBenchmarkRunResponsesBackend(t *testing.T) {
	t.Parallel()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	var responses, others atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/responses":
			responses.Add(1)
		case strings.HasSuffix(r.URL.Path, "/completions"):
			others.Add(1)
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	for _, endpoint := range []string{"/v1/completions", "/v1/responses"} {
		path := filepath.Join(t.TempDir(), "r.json")
		b := benchmark(t, "--backend", "openai-responses", "--endpoint", endpoint, "--num-prompts", "3", "--max-concurrency", "2",
			"--random-input-len", "8", "--random-output-len", "5", "--save-result", "--result-filename", path)
		if b.Options.API() != llm.Responses {
			t.Fatalf("%s: API %q", endpoint, b.Options.API())
		}
		outcome, stdout, stderr, err := runBenchmark(t, b, srv.URL)
		if err != nil || outcome.Verdict != runner.Passed || outcome.Lost || outcome.Summary == nil {
			t.Fatalf("%s: outcome %+v, %v; want passed\nstdout:\n%s\nstderr:\n%s", endpoint, outcome, err, stdout, stderr)
		}
		r := readResultFile(t, path)
		if r["completed"] != 3.0 || r["total_output_tokens"] != 15.0 || r["backend"] != "openai-responses" || !(r["mean_ttft_ms"].(float64) > 0) {
			t.Errorf("%s: completed %v, output tokens %v, backend %v, mean TTFT %v; want 3, 15 (ignore_eos), openai-responses, > 0",
				endpoint, r["completed"], r["total_output_tokens"], r["backend"], r["mean_ttft_ms"])
		}
	}
	if n, m := responses.Load(), others.Load(); n != 6 || m != 0 {
		t.Errorf("the server got %d Responses requests and %d others, want 6 and 0", n, m)
	}
}

// readResultFile reads the result file at path as JSON.
func readResultFile(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}
