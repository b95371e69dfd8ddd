package vllmbench

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
)

// rerankSim starts the simulator and returns its URL and a function
// giving the number of documents of each rerank request it got, sorted,
// and the paths of the other requests sent to it (POST).
func rerankSim(t *testing.T) (string, func() ([]int, []string)) {
	t.Helper()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	var mu sync.Mutex
	var docs []int
	var other []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		var body struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			Truncate  *int     `json:"truncate_prompt_tokens"`
		}
		mu.Lock()
		if r.URL.Path != "/v1/rerank" {
			if r.Method == http.MethodPost {
				other = append(other, r.URL.Path)
			}
		} else if json.Unmarshal(raw, &body) != nil || body.Query == "" || body.Truncate == nil || *body.Truncate != -1 {
			t.Errorf("rerank body %s", raw)
		} else {
			docs = append(docs, len(body.Documents))
		}
		mu.Unlock()
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() ([]int, []string) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Sorted(slices.Values(docs)), other
	}
}

// vllm-rerank sends --num-prompts documents, --random-batch-size to a
// request with one query, and reports vLLM's pooling block and result:
// no output tokens, E2EL alone, and no goodput, which vLLM's pooling
// benchmarks do not count, though --goodput be given.
func TestRerankBenchmark(t *testing.T) {
	t.Parallel()
	url, sent := rerankSim(t)
	path := filepath.Join(t.TempDir(), "r.json")
	b := benchmark(t, "--backend", "vllm-rerank", "--endpoint", "/v1/rerank", "--dataset-name", "random-rerank",
		"--num-prompts", "10", "--random-batch-size", "4", "--random-input-len", "32", "--max-concurrency", "2",
		"--goodput", "e2el:60000", "--save-result", "--result-filename", path)
	outcome, stdout, stderr, err := runBenchmark(t, b, url)
	if err != nil || outcome.Summary == nil {
		t.Fatalf("err %v, stderr %s", err, stderr)
	}
	if docs, other := sent(); !slices.Equal(docs, []int{2, 4, 4}) || len(other) != 0 {
		t.Errorf("documents per request %v, other requests %v; want [2 4 4] and none", docs, other)
	}
	_, block, _ := strings.Cut(stdout, "Serving Benchmark Result")
	for _, want := range []string{"Successful requests:                     3", "Failed requests:                         0", "Total input tokens:", "Total token throughput (tok/s):",
		"Mean E2EL (ms):", "P99 E2EL (ms):"} {
		if !strings.Contains(block, want) {
			t.Errorf("the block lacks %q:\n%s", want, stdout)
		}
	}
	for _, unwanted := range []string{"TTFT", "Total generated tokens", "Output token throughput", "goodput"} {
		if strings.Contains(block, unwanted) {
			t.Errorf("the block has %q:\n%s", unwanted, stdout)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var result map[string]any
	if err := json.Unmarshal(raw, &result); err != nil {
		t.Fatal(err)
	}
	if result["completed"] != 3.0 || result["num_prompts"] != 10.0 || result["backend"] != "vllm-rerank" || !(result["total_input_tokens"].(float64) > 0) {
		t.Errorf("result %s", raw)
	}
	for _, key := range []string{"failed", "total_output_tokens", "mean_ttft_ms", "output_throughput", "request_goodput"} {
		if _, ok := result[key]; ok {
			t.Errorf("result has %s: %s", key, raw)
		}
	}
	if _, ok := result["p99_e2el_ms"]; !ok {
		t.Errorf("result lacks p99_e2el_ms: %s", raw)
	}
	if outcome.Summary.Serving.Documents != 10 {
		t.Errorf("the run's documents %d, want 10", outcome.Summary.Serving.Documents)
	}
}

// --no-reranker: the first document is the query, and each request
// sends one document fewer.
func TestRerankOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		requests int
		docs     int
	}{
		{[]string{"--num-prompts", "10", "--random-batch-size", "4"}, 3, 10},
		{[]string{"--num-prompts", "10", "--random-batch-size", "4", "--no-reranker"}, 3, 9},
		{[]string{"--num-prompts", "5"}, 5, 5},
	} {
		args := append([]string{"--backend", "vllm-rerank", "--endpoint", "/v1/rerank", "--dataset-name", "random-rerank"}, tc.args...)
		o := benchmark(t, args...).Options
		n, _ := o.rerankDocs()
		query, docs := o.rerankLengths(n)
		if o.requests() != tc.requests || len(docs) != tc.docs || query < 1 || !slices.Equal(o.PercentileMetrics, []string{"e2el"}) {
			t.Errorf("%v: %d requests, %d documents, query %d, metrics %v", tc.args, o.requests(), len(docs), query, o.PercentileMetrics)
		}
		if again, _ := o.rerankLengths(0); again != query {
			t.Errorf("%v: query of %d tokens, then %d", tc.args, query, again)
		}
	}
}
