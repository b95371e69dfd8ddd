package runner_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmrun/llmrun/runtime/runner"
)

// A server that only reranks, as Text Embeddings Inference does, passes
// the preflight of a script whose client speaks its API: the preflight
// probes that client, not the command line's default, which would have
// sent it a chat request it cannot answer.
func TestPreflightProbesTheScriptsClientOfTheServer(t *testing.T) {
	var reranks, others atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/rerank" {
			if r.Method == http.MethodPost { // GETs are the model list and /metrics
				others.Add(1)
			}
			http.NotFound(w, r)
			return
		}
		var body struct {
			Texts []string `json:"texts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reranks.Add(1)
		ranks := make([]map[string]any, len(body.Texts))
		for i := range ranks {
			ranks[i] = map[string]any{"index": i, "score": 1 / float64(i+1)}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ranks)
	}))
	defer srv.Close()
	script := `import llm from 'llm';
const tei = llm.client({ api: 'tei-rerank', model: 'bge-reranker' });
export const options = { iterations: 2 };
export default function () { tei.stream({ query: 'capital of France?', texts: ['Horses.', 'Paris.'] }); }
`
	r := run(t, script, func(c *runner.Config) {
		c.NoPreflight = false
		c.Engine.LLM.BaseURL = srv.URL
	})
	o := r.outcome
	if o.Verdict != runner.Passed || o.Summary == nil || o.Summary.Serving.OK != 2 {
		t.Fatalf("outcome %+v\nstderr:\n%s", o, r.stderr)
	}
	// The server reached is this test's: it answered the preflight's
	// rerank and the run's two, and was asked nothing else.
	if reranks.Load() != 3 || others.Load() != 0 {
		t.Errorf("the server answered %d reranks and %d other POSTs, want 3 and 0 (no chat request)\nstderr:\n%s", reranks.Load(), others.Load(), r.stderr)
	}
	if strings.Contains(r.stderr, "preflight") && strings.Contains(r.stderr, "404") {
		t.Errorf("the preflight met a 404:\n%s", r.stderr)
	}
}
