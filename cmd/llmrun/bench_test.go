package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/tokenizer"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/vllmbench"
)

// flightCounter is the simulator behind a handler that counts the
// generation requests it gets and the most in flight at once.
type flightCounter struct {
	next http.Handler

	mu                        sync.Mutex
	inFlight, peak, generated int
}

func (c *flightCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/completions") {
		c.next.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	c.inFlight++
	c.generated++
	c.peak = max(c.peak, c.inFlight)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()
	c.next.ServeHTTP(w, r)
}

// counts returns the generation requests received and the peak in flight.
func (c *flightCounter) counts() (generated, peak int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generated, c.peak
}

// startCountedSim starts the simulator on 127.0.0.1 behind a flightCounter
// and returns its URL, without /v1 (as vLLM's --base-url).
func startCountedSim(t *testing.T) (string, *flightCounter) {
	t.Helper()
	return startWrappedSim(t, func(sim http.Handler) *flightCounter { return &flightCounter{next: sim} })
}

// startWrappedSim starts the simulator on 127.0.0.1 behind the handler
// wrap makes of it, and returns its URL, without /v1, and that handler.
func startWrappedSim[H http.Handler](t *testing.T, wrap func(sim http.Handler) H) (string, H) {
	t.Helper()
	var h H
	url := startSimBehind(t, func(sim http.Handler) http.Handler {
		h = wrap(sim)
		return h
	})
	return url, h
}

// startSimBehind starts the simulator on 127.0.0.1 behind the handler
// wrap makes of it, and returns its URL, without /v1.
func startSimBehind(t *testing.T, wrap func(sim http.Handler) http.Handler) string {
	t.Helper()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	srv := httptest.NewServer(wrap(sim.Handler()))
	t.Cleanup(srv.Close)
	return srv.URL
}

// vllmKeys are the keys of vllm bench serve's result, in its order, for
// --save-detailed with --goodput, --metadata tp=1 and --metric-percentiles
// 50,99 over --percentile-metrics ttft,tpot,itl,e2el, recorded from
// vllm/benchmarks/serve.py at commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1
// (main_async's result_json, then benchmark's result dict and
// process_one_metric's keys). llmrun writes them all but queue_times, and
// no other (docs/bench.md).
var vllmKeys = []string{
	"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "tp",
	"request_rate", "burstiness", "max_concurrency",
	"duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
	"request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
	"input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "generated_texts", "errors",
	"max_output_tokens_per_s", "max_concurrent_requests", "rtfx",
	"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p50_ttft_ms", "p99_ttft_ms",
	"mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p50_tpot_ms", "p99_tpot_ms",
	"mean_itl_ms", "median_itl_ms", "std_itl_ms", "p50_itl_ms", "p99_itl_ms",
	"mean_e2el_ms", "median_e2el_ms", "std_e2el_ms", "p50_e2el_ms", "p99_e2el_ms",
}

// orderedKeys returns the keys of the JSON object in b, in order.
func orderedKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %v", err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// readResult reads vLLM's result file at path.
func readResult(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// llmrun bench sends exactly --num-prompts requests, at most
// --max-concurrency at once (the others wait: none is dropped), prints
// vLLM's block and saves vLLM's keys, in vLLM's order.
func TestBenchSavesVLLMResult(t *testing.T) {
	t.Parallel()
	url, counter := startCountedSim(t)
	dir := t.TempDir()
	export := filepath.Join(dir, "llmrun.json")
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--backend", "vllm", "--num-prompts", "30",
		"--request-rate", "200", "--burstiness", "0.5", "--max-concurrency", "3",
		"--random-input-len", "32", "--random-output-len", "8", "--random-range-ratio", "0.5",
		"--goodput", "ttft:60000", "e2el:60000", "--metric-percentiles", "50,99", "--percentile-metrics", "ttft,tpot,itl,e2el",
		"--metadata", "tp=1", "--save-result", "--save-detailed", "--result-dir", filepath.Join(dir, "results"),
		"--no-preflight", "-q", "--summary-export", export)
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// 200 arrivals per second of requests that each take 100 ms or more
	// reach the cap.
	if generated, peak := counter.counts(); generated != 30 || peak != 3 {
		t.Errorf("the server got %d requests, %d at most at once; want exactly 30, 3 at once", generated, peak)
	}
	for _, line := range []string{
		"Traffic request rate: 200.0\nBurstiness factor: 0.5 (Gamma distribution)\nMaximum request concurrency: 3\n",
		"============ Serving Benchmark Result ============\n",
		"Successful requests:                     30        \n",
		"Maximum request concurrency:             3         \n",
		"Request rate configured (RPS):           200.00    \n",
		"Request goodput (req/s):",
		"---------------Time to First Token----------------\n",
		"P50 E2EL (ms):",
		"\n==================================================\n",
	} {
		if !strings.Contains(stdout, line) {
			t.Errorf("vLLM's block lacks %q:\n%s", line, stdout)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "results", "vllm-200.0qps-concurrency3-llmsim-1-*.json"))
	if len(files) != 1 {
		t.Fatalf("result files %v, want one named as vLLM names it", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if keys := orderedKeys(t, b); !slices.Equal(keys, vllmKeys) {
		t.Errorf("keys\n%v\nwant vLLM's\n%v", keys, vllmKeys)
	}
	r := readResult(t, files[0])
	for key, want := range map[string]any{"num_prompts": 30.0, "completed": 30.0, "failed": 0.0, "max_concurrency": 3.0,
		"request_rate": 200.0, "burstiness": 0.5, "backend": "vllm", "model_id": "llmsim-1", "tp": "1", "label": nil} {
		if r[key] != want {
			t.Errorf("%s = %v, want %v", key, r[key], want)
		}
	}
	if r["request_goodput"] != r["request_throughput"] {
		t.Errorf("request_goodput %v, want request_throughput %v: every request met bounds of a minute", r["request_goodput"], r["request_throughput"])
	}
	for _, key := range []string{"input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "generated_texts", "errors"} {
		if list, _ := r[key].([]any); len(list) != 30 {
			t.Errorf("%d %s, want 30", len(list), key)
		}
	}
	for i, gaps := range r["itls"].([]any) {
		n := r["output_lens"].([]any)[i].(float64)
		if len(gaps.([]any)) != int(n)-1 || r["generated_texts"].([]any)[i] == "" || r["errors"].([]any)[i] != "" {
			t.Errorf("request %d: %d itls for %v tokens, text %q, error %q; want a gap per token after the first, a text, no error",
				i, len(gaps.([]any)), n, r["generated_texts"].([]any)[i], r["errors"].([]any)[i])
		}
	}
	for _, l := range r["output_lens"].([]any) {
		if n := l.(float64); n < 4 || n > 12 {
			t.Errorf("output length %v, want within 8·[0.5, 1.5]", n)
		}
	}
	if peak := r["max_concurrent_requests"].(float64); peak < 1 || peak > 3 {
		t.Errorf("max_concurrent_requests %v, want 1 to 3", peak)
	}
	// The same run is llmrun's too: its result file has its goodput.
	if s := readSummary(t, export); s.Serving.OK != 30 || s.Serving.Goodput == nil || s.Serving.Goodput.Good != 30 {
		t.Errorf("llmrun's result: %d ok, goodput %+v", s.Serving.OK, s.Serving.Goodput)
	}
}

// At --request-rate inf, all the requests go at once, up to
// --max-concurrency; the result holds no per-request lists without
// --save-detailed, and --result-filename names it.
func TestBenchInfiniteRate(t *testing.T) {
	t.Parallel()
	url, counter := startCountedSim(t)
	dir := t.TempDir()
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--backend", "openai-chat", "--endpoint", "/v1/chat/completions",
		"--num-prompts", "12", "--max-concurrency", "4", "--random-input-len", "16", "--random-output-len", "4",
		"--save-result", "--result-dir", dir, "--result-filename", "out.json", "--no-preflight", "-q")
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if generated, peak := counter.counts(); generated != 12 || peak != 4 {
		t.Errorf("the server got %d requests, %d at most at once; want exactly 12, 4 at once", generated, peak)
	}
	if strings.Contains(stdout, "Request rate configured") || strings.Contains(stdout, "goodput") {
		t.Errorf("vLLM's block at rate inf without --goodput:\n%s", stdout)
	}
	r := readResult(t, filepath.Join(dir, "out.json"))
	if r["request_rate"] != "inf" || r["request_goodput"] != nil || r["completed"] != 12.0 {
		t.Errorf("request_rate %v, request_goodput %v, completed %v; want inf, null, 12", r["request_rate"], r["request_goodput"], r["completed"])
	}
	for _, key := range []string{"input_lens", "ttfts", "errors", "p99_e2el_ms"} {
		if _, ok := r[key]; ok {
			t.Errorf("%s saved without --save-detailed or e2el in --percentile-metrics", key)
		}
	}
}

// Bad flags are refused before anything runs, naming the flag, with exit
// 2: an argument that is not a flag, and vLLM's flags that
// vllmbench.CommandLine refuses (its TestBenchmarkRefusesBadFlags has
// every refusal).
func TestBenchBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--num-prompts", "0"}, "--num-prompts must be at least 1"},
		{[]string{"--header", "novalue"}, `--header "novalue": invalid header format`},
		{[]string{"stray"}, `unexpected argument "stray"`},
	} {
		code, _, stderr := command(t, "bench", tc.args...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitcode.Usage, tc.want)
		}
	}
}

// A custom dataset's prompts are sent in order, wrapping around, each
// asking for --output-len tokens; --out works as in llmrun run.
func TestBenchCustomDataset(t *testing.T) {
	t.Parallel()
	url, counter := startCountedSim(t)
	data := writeScript(t, "prompts.jsonl", "{\"prompt\": \"hello there\"}\n{\"prompt\": \"what is up\"}\n")
	dir := t.TempDir()
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--dataset-name", "custom", "--dataset-path", data,
		"--num-prompts", "3", "--output-len", "5", "--save-result", "--result-filename", filepath.Join(dir, "r.json"), "--no-preflight", "-q",
		"--out", "jsonl="+filepath.Join(dir, "requests.jsonl"))
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r := readResult(t, filepath.Join(dir, "r.json"))
	if generated, _ := counter.counts(); generated != 3 || r["completed"] != 3.0 || r["total_output_tokens"] != 15.0 {
		t.Errorf("%d requests, completed %v, %v output tokens; want 3, 3 and 15", generated, r["completed"], r["total_output_tokens"])
	}
	if b, err := os.ReadFile(filepath.Join(dir, "requests.jsonl")); err != nil || strings.Count(string(b), "\n") != 3 {
		t.Errorf("--out jsonl: %v, %q; want a line per request", err, b)
	}
}

// --num-warmups requests go first and count in no figure of the result.
func TestBenchWarmups(t *testing.T) {
	t.Parallel()
	url, counter := startCountedSim(t)
	path := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--num-prompts", "5", "--num-warmups", "2", "--request-rate", "100",
		"--random-input-len", "8", "--random-output-len", "3", "--save-result", "--save-detailed", "--result-filename", path, "--no-preflight", "-q")
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r := readResult(t, path)
	if generated, _ := counter.counts(); generated != 7 || r["completed"] != 5.0 || len(r["input_lens"].([]any)) != 5 || r["num_prompts"] != 5.0 {
		t.Errorf("the server got %d requests; the result has %v completed, %d input_lens, num_prompts %v; want 7, 5, 5, 5",
			generated, r["completed"], len(r["input_lens"].([]any)), r["num_prompts"])
	}
}

// bodyRecorder is the simulator behind a handler that keeps the prompt and
// max_tokens of each completions request, and of every generation request
// its path, whole body and headers.
type bodyRecorder struct {
	next http.Handler

	mu      sync.Mutex
	bodies  []completionBody
	raw     []map[string]any
	headers []http.Header
	paths   []string
}

// startRecordedSim starts the simulator on 127.0.0.1 behind a
// bodyRecorder and returns its URL, without /v1.
func startRecordedSim(t *testing.T) (string, *bodyRecorder) {
	t.Helper()
	return startWrappedSim(t, func(sim http.Handler) *bodyRecorder { return &bodyRecorder{next: sim} })
}

type completionBody struct {
	Prompt    string `json:"prompt"`
	MaxTokens int    `json:"max_tokens"`
}

func (b *bodyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/completions") {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var body completionBody
		var whole map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := json.Unmarshal(raw, &whole); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		b.bodies = append(b.bodies, body)
		b.raw, b.headers, b.paths = append(b.raw, whole), append(b.headers, r.Header.Clone()), append(b.paths, r.URL.Path)
		b.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(raw))
	}
	b.next.ServeHTTP(w, r)
}

// --dataset-name prefix_repetition sends vLLM's dataset: exactly
// --num-prompts requests, each one of --prefix-repetition-num-prefixes
// prefixes of exactly --prefix-repetition-prefix-len tokens, as many
// requests each, then its own suffix of --prefix-repetition-suffix-len
// tokens, asking for --prefix-repetition-output-len; the simulator's
// prefix cache serves the repeated prefixes. At a finite rate the
// arrivals are vLLM's rescaled ones: the last at exactly N / rate.
func TestBenchPrefixRepetition(t *testing.T) {
	t.Parallel()
	url, rec := startRecordedSim(t)
	export := filepath.Join(t.TempDir(), "llmrun.json")
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--dataset-name", "prefix_repetition",
		"--prefix-repetition-prefix-len", "40", "--prefix-repetition-suffix-len", "12",
		"--prefix-repetition-num-prefixes", "3", "--prefix-repetition-output-len", "7",
		"--num-prompts", "30", "--request-rate", "200", "--max-concurrency", "4", "--seed", "5",
		"--no-preflight", "-q", "--summary-export", export)
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	tok, err := tokenizer.Load("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	bodies := slices.Clone(rec.bodies)
	rec.mu.Unlock()
	if len(bodies) != 30 {
		t.Fatalf("the server got %d requests, want exactly 30", len(bodies))
	}
	perPrefix := map[string]int{}
	for i, b := range bodies {
		ids, err := tok.Encode(b.Prompt)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 52 || b.MaxTokens != 7 {
			t.Fatalf("request %d: %d prompt tokens, max_tokens %d; want 40 + 12, and 7", i, len(ids), b.MaxTokens)
		}
		prefix, err := tok.Decode(ids[:40])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.Prompt, prefix) {
			t.Fatalf("request %d: its first 40 tokens %q are not its text's start", i, prefix)
		}
		if n, err := tok.Count(prefix); err != nil || n != 40 {
			t.Fatalf("request %d: prefix of %d tokens (%v), want 40", i, n, err)
		}
		if n, err := tok.Count(strings.TrimPrefix(b.Prompt[len(prefix):], " ")); err != nil || n != 12 {
			t.Fatalf("request %d: suffix of %d tokens (%v), want 12", i, n, err)
		}
		perPrefix[prefix]++
	}
	if len(perPrefix) != 3 {
		t.Fatalf("%d distinct prefixes, want 3", len(perPrefix))
	}
	for prefix, n := range perPrefix {
		if n != 10 {
			t.Errorf("prefix %.30q… repeated by %d requests, want 30 / 3 = 10", prefix, n)
		}
	}
	if !strings.Contains(stdout, "served from the prefix cache") {
		t.Errorf("the summary reports no prefix-cache share:\n%s", stdout)
	}
	s := readSummary(t, export)
	if s.Serving.CachedTokens <= 0 || s.Serving.OK != 30 {
		t.Errorf("%d ok, %d input tokens from the prefix cache; want 30, and some", s.Serving.OK, s.Serving.CachedTokens)
	}
	if len(s.Meta.LoadShape) != 1 || !strings.Contains(s.Meta.LoadShape[0].Description, "the last at 150ms") {
		t.Errorf("load shape %+v, want 30 arrivals at 200/s, the last at 150ms", s.Meta.LoadShape)
	}
}

// What llmrun bench says of its run on stderr is begun with its own name:
// a server that cannot be reached fails the preflight, and no request is
// sent.
func TestBenchMessagesNameTheCommand(t *testing.T) {
	t.Parallel()
	code, _, stderr := command(t, "bench", "--base-url", "http://127.0.0.1:1", "--num-prompts", "3")
	if code != exitcode.Preflight {
		t.Errorf("exit %d, want %d (preflight failed)", code, exitcode.Preflight)
	}
	for _, want := range []string{"llmrun bench: preflight: ", "llmrun bench: no load was sent"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "llmrun run:") {
		t.Errorf("stderr names llmrun run:\n%s", stderr)
	}
}

// Two runs of llmrun bench with the default seed send the same requests:
// the same prompts with the same lengths and max_tokens, however its VUs
// shared them; the second, with --base-url ending in /v1 (which llmrun
// run takes too), reaches the same server. The server's prefix cache
// served the second run's prompts, and the warning says what fixes that
// here: another --seed, since bench's seed is fixed.
func TestBenchDefaultSeedRepeatsTheRun(t *testing.T) {
	t.Parallel()
	url, rec := startRecordedSim(t)
	dir := t.TempDir()
	var sent [2][]completionBody
	var stdouts [2]string
	for i, base := range []string{url, url + "/v1/"} {
		code, stdout, stderr := command(t, "bench", "--base-url", base, "--num-prompts", "24", "--max-concurrency", "6",
			"--random-input-len", "300", "--random-output-len", "6", "--random-range-ratio", "0.9",
			"--append-result", "--result-dir", dir, "--result-filename", "runs.json", "--no-preflight", "-q")
		if code != exitcode.OK {
			t.Fatalf("run %d (--base-url %s): exit %d\nstdout:\n%s\nstderr:\n%s", i+1, base, code, stdout, stderr)
		}
		rec.mu.Lock()
		sent[i], rec.bodies = rec.bodies, nil
		rec.mu.Unlock()
		slices.SortFunc(sent[i], func(a, b completionBody) int { return strings.Compare(a.Prompt, b.Prompt) })
		stdouts[i] = stdout
	}
	// --append-result wrote both runs' results into one file, a line each.
	b, err := os.ReadFile(filepath.Join(dir, "runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) != 2 {
		t.Fatalf("--append-result twice: %d lines, want 2:\n%s", len(lines), b)
	}
	var totals [2]any
	for i, line := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		totals[i] = r["total_input_tokens"]
	}
	if len(sent[0]) != 24 || !slices.Equal(sent[0], sent[1]) {
		t.Errorf("the two runs sent %d and %d requests, the same ones: %v; want the same 24", len(sent[0]), len(sent[1]), slices.Equal(sent[0], sent[1]))
	}
	if totals[0] != totals[1] {
		t.Errorf("total_input_tokens %v then %v, want the same", totals[0], totals[1])
	}
	if !strings.Contains(stdouts[1], "run with another --seed than 0") || strings.Contains(stdouts[1], "run without --seed") {
		t.Errorf("the second run's prefix-cache warning does not give bench's fix:\n%s", stdouts[1])
	}
}

// Every flag of vllm bench serve parses (vllmbench's
// TestAddFlagsTakesEveryVLLMFlag): the ignored ones are named once on one
// line, and a refused one stops llmrun bench before anything is sent,
// saying that it is a vLLM flag llmrun does not support and why.
func TestBenchTakesEveryVLLMFlag(t *testing.T) {
	t.Parallel()
	for _, vf := range vllmbench.Flags {
		if vf.Use != vllmbench.Refused {
			continue
		}
		args := []string{"--" + vf.Name}
		if vf.Arity != vllmbench.NoValue {
			args = append(args, "x")
		}
		code, _, stderr := command(t, "bench", args...)
		want := "--" + vf.Name + " is a vLLM flag llmrun bench does not support: " + vf.Why
		if code != exitcode.Usage || !strings.Contains(stderr, want) {
			t.Errorf("bench %v: exit %d, stderr %q; want %d and %q", args, code, stderr, exitcode.Usage, want)
		}
	}
	url, counter := startCountedSim(t)
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--num-prompts", "3", "--random-input-len", "8", "--random-output-len", "2",
		"--trust-remote-code", "--disable-tqdm", "--tokenizer-mode", "auto", "--disable-tqdm", "--no-preflight", "-q")
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := "llmrun bench: ignoring vLLM flags that cannot matter here: --tokenizer-mode (llmrun's tokenizers (tiktoken encodings, tokenizer.json) have one mode); " +
		"--disable-tqdm (llmrun shows no tqdm bar; -q turns its live view off); --trust-remote-code (llmrun's tokenizers run no code from the model's repository)\n"
	if !strings.Contains(stderr, want) || strings.Count(stderr, "ignoring") != 1 {
		t.Errorf("stderr does not name the ignored flags once:\n%s\nwant\n%s", stderr, want)
	}
	if generated, _ := counter.counts(); generated != 3 {
		t.Errorf("the server got %d requests, want 3", generated)
	}
}

// The flags that shape vLLM's requests shape llmrun bench's: the sampling
// parameters and --extra-body (over them) in the body, --logprobs with
// the completions API, --header and --request-id-prefix as headers,
// --served-model-name as the model sent while --model stays the result's
// model_id; --backend sglang is the completions API, --endpoint-type
// openai-chat the chat API and the result's endpoint_type. The result's
// tokenizer_id is the tokenizer that counted the prompts, and its numbers
// are written as vLLM's json.dump writes them.
func TestBenchSendsVLLMRequestFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args                       []string
		path, endpointType, prompt string
		logprobs                   any
	}{
		{args: []string{"--backend", "sglang"}, path: "/v1/completions", endpointType: "sglang", prompt: "prompt", logprobs: 2.0},
		{args: []string{"--backend", "sglang", "--endpoint-type", "openai-chat"}, path: "/v1/chat/completions", endpointType: "openai-chat", prompt: "messages"},
	} {
		url, rec := startRecordedSim(t)
		dir := t.TempDir()
		args := append([]string{"--base-url", url, "--num-prompts", "4", "--max-concurrency", "2",
			"--random-input-len", "8", "--random-output-len", "3", "--request-rate", "1000", "--burstiness", "1",
			"--model", "org/Real-Model", "--served-model-name", "llmsim-1",
			"--temperature", "0.5", "--top-p", "0.9", "--top-k", "5", "--min-p", "0.1", "--frequency-penalty", "0.25",
			"--presence-penalty", "0.5", "--repetition-penalty", "1.1", "--extra-body", `{"top_k": 7, "foo": "bar"}`, "--logprobs", "2",
			"--header", "x-tenant=a", "x-trace = 1", "--request-id-prefix", "req-",
			"--save-result", "--result-dir", dir, "--result-filename", "r.json", "--no-preflight", "-q"}, tc.args...)
		code, stdout, stderr := command(t, "bench", args...)
		if code != exitcode.OK {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, stdout, stderr)
		}
		rec.mu.Lock()
		raw, headers, paths := slices.Clone(rec.raw), slices.Clone(rec.headers), slices.Clone(rec.paths)
		rec.mu.Unlock()
		if len(raw) != 4 {
			t.Fatalf("%v: the server got %d requests, want 4", tc.args, len(raw))
		}
		var ids []string
		for i, body := range raw {
			for key, want := range map[string]any{"model": "llmsim-1", "temperature": 0.5, "top_p": 0.9, "top_k": 7.0, "min_p": 0.1,
				"frequency_penalty": 0.25, "presence_penalty": 0.5, "repetition_penalty": 1.1, "foo": "bar", "logprobs": tc.logprobs, "ignore_eos": true} {
				if body[key] != want {
					t.Errorf("%v: request %d: %s = %v, want %v", tc.args, i, key, body[key], want)
				}
			}
			if _, ok := body[tc.prompt]; !ok || paths[i] != tc.path {
				t.Errorf("%v: request %d to %s without %s: %v", tc.args, i, paths[i], tc.prompt, body)
			}
			if headers[i].Get("x-tenant") != "a" || headers[i].Get("x-trace") != "1" {
				t.Errorf("%v: request %d: headers %v, want x-tenant: a and x-trace: 1", tc.args, i, headers[i])
			}
			ids = append(ids, headers[i].Get("x-request-id"))
		}
		slices.Sort(ids)
		if want := []string{"req-0", "req-1", "req-2", "req-3"}; !slices.Equal(ids, want) {
			t.Errorf("%v: x-request-id %v, want %v", tc.args, ids, want)
		}
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"endpoint_type": "` + tc.endpointType + `", "backend": "sglang", "label": null, "model_id": "org/Real-Model", "tokenizer_id": "cl100k_base", "num_prompts": 4, `,
			`"request_rate": 1000.0, "burstiness": 1.0, "max_concurrency": 2, `, `"rtfx": 0.0`, `"completed": 4, "failed": 0, `} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%v: the result lacks %s:\n%s", tc.args, want, b)
			}
		}
	}
}

// --ready-check-timeout-sec waits for the endpoint: one that never answers
// ends llmrun bench when the time is up, with the last failure, and no
// benchmark request is sent. 4 s, not 1: the probe's 503 must come back
// within it on a loaded machine.
func TestBenchReadyCheckTimesOut(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	probes := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		probes++
		mu.Unlock()
		http.Error(w, "loading the model", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	code, _, stderr := command(t, "bench", "--base-url", srv.URL, "--num-prompts", "5", "--model", "m", "--ready-check-timeout-sec", "4", "-q")
	if code != exitcode.Preflight {
		t.Errorf("exit %d, want %d", code, exitcode.Preflight)
	}
	for _, want := range []string{"llmrun bench: waiting up to 4s for the endpoint to become ready", "llmrun bench: the endpoint is not ready: ",
		"llmrun bench: --ready-check-timeout-sec 4: the endpoint was not ready within 4s: ", "503", "no load was sent"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if probes != 1 {
		t.Errorf("the server got %d requests in 4 s, want the 1 probe (the next would come 5 s later)", probes)
	}
}

// A --save-result destination that cannot take the file is refused before
// any request is sent, as --summary-export's is, not after the whole
// benchmark when its result would be lost.
func TestBenchSaveResultPathCheckedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "taken.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing directory", []string{"--result-dir", dir, "--result-filename", "a/b/c.json"}, "does not exist"},
		{"a directory", []string{"--result-dir", dir, "--result-filename", "taken.json"}, "it is a directory"},
		{"append", []string{"--append-result", "--result-dir", dir, "--result-filename", "taken.json"}, "it is a directory"},
		{"a device that refuses writes", []string{"--result-filename", "/dev/full"}, "it is a device other than /dev/null or a terminal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat("/dev/full"); err != nil && strings.Contains(tc.want, "device") {
				t.Skipf("no /dev/full: %v", err)
			}
			url, counter := startCountedSim(t)
			args := append([]string{"--base-url", url, "--num-prompts", "3", "--random-input-len", "8", "--random-output-len", "2",
				"--save-result", "--no-preflight", "-q"}, tc.args...)
			code, _, stderr := command(t, "bench", args...)
			if code != exitcode.Error || !strings.Contains(stderr, "--save-result") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d, naming --save-result and %q", code, stderr, exitcode.Error, tc.want)
			}
			if generated, _ := counter.counts(); generated != 0 {
				t.Errorf("the server got %d requests before the bad destination was refused", generated)
			}
		})
	}
}

// A --save-result file that another output also writes, by its name or
// through a link that does not resolve yet, is refused before any
// request is sent, naming both flags and the file.
func TestBenchSaveResultSharingAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	result := filepath.Join(dir, "r.json")
	dangling := filepath.Join(dir, "link.json")
	if err := os.Symlink("r.json", dangling); err != nil {
		t.Fatal(err)
	}
	for _, other := range [][]string{{"--summary-export", dangling}, {"--out", "jsonl=" + result}} {
		url, counter := startCountedSim(t)
		args := append([]string{"--base-url", url, "--num-prompts", "3", "--random-input-len", "8", "--random-output-len", "2",
			"--save-result", "--result-dir", dir, "--result-filename", "r.json", "--no-preflight", "-q"}, other...)
		code, _, stderr := command(t, "bench", args...)
		if code != exitcode.Usage || !strings.Contains(stderr, "--save-result "+result+" are the same file") {
			t.Errorf("%v: exit %d, stderr %q; want %d, naming --save-result and the file", other, code, stderr, exitcode.Usage)
		}
		if generated, _ := counter.counts(); generated != 0 {
			t.Errorf("%v: the server got %d requests before the shared file was refused", other, generated)
		}
	}
}

// --dataset-name, not the file's extension, says how --dataset-path is
// read: a JSONL file given as sharegpt is refused before the run, naming
// both flags rather than a line of the generated script; JSONL prompts
// in a .json file run as custom.
func TestBenchDatasetNameDecidesTheFormat(t *testing.T) {
	t.Parallel()
	url, counter := startCountedSim(t)
	jsonl := "{\"prompt\": \"hello there\"}\n{\"prompt\": \"what is up\"}\n"
	code, _, stderr := command(t, "bench", "--base-url", url, "--dataset-name", "sharegpt", "--dataset-path", writeScript(t, "prompts.jsonl", jsonl),
		"--num-prompts", "2", "--no-preflight", "-q")
	if code != exitcode.Usage || !strings.Contains(stderr, "(--dataset-name sharegpt): ") || !strings.Contains(stderr, "not a JSON array") ||
		strings.Contains(stderr, "llmrun-bench.js") {
		t.Errorf("sharegpt given a JSONL file: exit %d, stderr %q; want %d naming --dataset-path and --dataset-name, not the generated script", code, stderr, exitcode.Usage)
	}
	if generated, _ := counter.counts(); generated != 0 {
		t.Errorf("the server got %d requests for a dataset refused", generated)
	}
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--dataset-name", "custom", "--dataset-path", writeScript(t, "prompts.json", jsonl),
		"--num-prompts", "2", "--output-len", "3", "--no-preflight", "-q")
	if code != exitcode.OK {
		t.Fatalf("custom JSONL in a .json file: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if generated, _ := counter.counts(); generated != 2 {
		t.Errorf("the server got %d requests, want the 2 of the custom dataset", generated)
	}
}
