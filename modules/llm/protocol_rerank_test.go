package llm

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/metrics"
)

// rerankBody is a request of api for n documents.
func rerankBody(api API, n int) map[string]any {
	docs := make([]any, n)
	for i := range docs {
		docs[i] = fmt.Sprintf("document %d about rivers and mountains", i)
	}
	return map[string]any{"query": "which document is about rivers?", rerankDocumentsField(api): docs}
}

// The recorded responses of vLLM, Cohere and TEI (testdata/rerank-SOURCES.md
// says where each comes from), served by a real server, give their scores
// in order, the documents sent and vLLM's token count; the request goes to
// each API's path with its documents field.
func TestRerankTranscripts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, path string
		api        API
		docs       int
		want       []RerankScore
		prompt     int
	}{
		{"testdata/vllm-rerank.json", "/v1/rerank", Rerank, 3, []RerankScore{{1, 0.99853515625}, {0, 0.0005860328674316406}}, 56},
		{"testdata/cohere-rerank-v2.json", "/v1/rerank", Rerank, 5, []RerankScore{{3, 0.999071}, {4, 0.7867867}, {0, 0.32713068}}, 0},
		{"testdata/tei-rerank.json", "/rerank", TEIRerank, 2, []RerankScore{{1, 0.9987814}, {0, 0.022949219}}, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var path, body string
			_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				path, body = r.URL.Path, string(b)
				w.Header().Set("Content-Type", "application/json")
				w.Write(data)
			}, Config{API: tc.api, Model: "m"})
			res := c.Stream(t.Context(), Request{Body: rerankBody(tc.api, tc.docs)})
			if !res.OK || res.API != tc.api || res.Stream || res.Documents != tc.docs || res.PromptTokens != tc.prompt ||
				res.TTFT != 0 || res.Chunks != 0 || res.OutputTokens != 0 || res.E2E <= 0 || !slices.Equal(res.Rerank, tc.want) {
				t.Errorf("result %+v", res)
			}
			field := `"` + rerankDocumentsField(tc.api) + `":[`
			if path != tc.path || !strings.Contains(body, field) || strings.Contains(body, `"model"`) != (tc.api == Rerank) {
				t.Errorf("request %s %s", path, body)
			}
		})
	}
}

func TestRerankAgainstSimulator(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	for _, base := range []string{srv.URL(), srv.URL() + "/v1"} {
		c, err := NewClient(Config{BaseURL: base, Model: "reranker"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		for _, api := range []API{Rerank, TEIRerank} {
			first := c.Stream(t.Context(), Request{API: api, Body: rerankBody(api, 5)})
			again := c.Stream(t.Context(), Request{API: api, Body: rerankBody(api, 5)})
			if !first.OK || first.Stream || first.Documents != 5 || len(first.Rerank) != 5 || first.TTFT != 0 || first.E2E <= 0 ||
				first.Model != "reranker" || !slices.Equal(first.Rerank, again.Rerank) {
				t.Errorf("%s: %+v, then %+v", api, first, again)
			}
			if !slices.IsSortedFunc(first.Rerank, func(a, b RerankScore) int { return cmp.Compare(b.Score, a.Score) }) {
				t.Errorf("%s: scores not best first: %v", api, first.Rerank)
			}
			if (first.PromptTokens > 0) != (api == Rerank) {
				t.Errorf("%s: prompt tokens %d (vLLM's usage has them, TEI's answer not)", api, first.PromptTokens)
			}
		}
		body := rerankBody(Rerank, 6)
		body["top_n"] = 2
		res := c.Stream(t.Context(), Request{API: Rerank, Body: body})
		if !res.OK || res.Documents != 6 || len(res.Rerank) != 2 {
			t.Errorf("top_n 2: %+v", res)
		}
	}
}

// Faults, refusals and the server's limits fail a rerank request by
// class.
func TestRerankErrors(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c, err := NewClient(Config{BaseURL: srv.URL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for fault, class := range map[string]ErrorClass{
		"http_5xx":           ErrHTTP5xx,
		"http_429":           ErrHTTP429,
		"refuse":             ErrCut,
		"wrong_content_type": ErrDecode,
		"error_event":        ErrHTTP4xx, // a mid-stream fault: refused for a request that does not stream
	} {
		for _, api := range []API{Rerank, TEIRerank} {
			res := c.Stream(t.Context(), Request{API: api, Body: rerankBody(api, 2), Headers: map[string]string{llmsim.FaultHeader: fault}})
			if res.Class != class {
				t.Errorf("%s %s: class %q (%s), want %q", api, fault, res.Class, res.Error, class)
			}
		}
	}
	long := rerankBody(Rerank, 1)
	long["documents"] = []any{strings.Repeat("word ", 1<<16)}
	for name, body := range map[string]map[string]any{
		"too many documents": rerankBody(Rerank, llmsim.MaxRerankDocuments+1),
		"too long":           long,
	} {
		if res := c.Stream(t.Context(), Request{API: Rerank, Body: body}); res.Class != ErrHTTP4xx || res.Status != 400 {
			t.Errorf("%s: %+v", name, res)
		}
	}
	for _, body := range []map[string]any{
		{"documents": []any{"a"}},
		{"query": "q", "documents": "a"},
		{"query": "q", "documents": []any{}},
		{"query": "q", "texts": []any{"a"}}, // TEI's field, not vLLM's
		{"query": "q", "documents": []any{"a"}, "stream": true},
	} {
		if res := c.Stream(t.Context(), Request{API: Rerank, Body: body}); res.Class != ErrInvalidRequest {
			t.Errorf("%v: %+v, want invalid_request", body, res)
		}
	}
}

// A rerank response that is not what was asked fails as decode, its
// results bounded by the documents sent; a 413 is http_4xx.
func TestRerankHostileResponses(t *testing.T) {
	t.Parallel()
	const jsonType = "application/json"
	huge := "[" + strings.Repeat(`{"index":0,"score":1},`, 100000) + `{"index":0,"score":1}]`
	for _, tc := range []struct {
		name string
		api  API
		h    http.HandlerFunc
		want ErrorClass
		msg  string
	}{
		{"more results than documents", TEIRerank, replyWith(jsonType, huge), ErrDecode, "100001 results for 2 documents"},
		{"index out of range", Rerank, replyWith(jsonType, `{"results":[{"index":2,"relevance_score":0.5}]}`), ErrDecode, "index 2 is not one of the 2 documents"},
		{"negative index", TEIRerank, replyWith(jsonType, `[{"index":-1,"score":0.5}]`), ErrDecode, "index -1"},
		{"score a string", Rerank, replyWith(jsonType, `{"results":[{"index":0,"relevance_score":"high"}]}`), ErrDecode, "relevance_score"},
		{"no score", TEIRerank, replyWith(jsonType, `[{"index":0,"relevance_score":0.5}]`), ErrDecode, "want an index and a score"},
		{"no results", Rerank, replyWith(jsonType, `{"data":[]}`), ErrDecode, "without results"},
		{"an object for TEI", TEIRerank, replyWith(jsonType, `{"results":[]}`), ErrDecode, "cannot unmarshal object"},
		{"negative usage", Rerank, replyWith(jsonType, `{"results":[],"usage":{"total_tokens":-4}}`), ErrDecode, "-4 prompt tokens"},
		{"error object", Rerank, replyWith(jsonType, `{"error":{"message":"boom"}}`), ErrStreamError, "boom"},
		{"html", Rerank, replyWith("text/html", `<html></html>`), ErrDecode, "content type"},
		{"413", TEIRerank, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", jsonType)
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			io.WriteString(w, `{"error":"batch size 100 > maximum allowed batch size 32","error_type":"Validation"}`)
		}, ErrHTTP4xx, "batch size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileServer(t, tc.api, tc.h)
			res := c.Stream(t.Context(), Request{Body: rerankBody(tc.api, 2)})
			if res.Class != tc.want || !strings.Contains(res.Error, tc.msg) || (res.Class != ErrNone && len(res.Rerank) > 0) {
				t.Errorf("class %q, error %q, rerank %v; want %q with %q", res.Class, res.Error, res.Rerank, tc.want, tc.msg)
			}
		})
	}
}

// A rerank request counts its documents in llm_documents, and gives no
// TTFT nor output tokens.
func TestRerankSamples(t *testing.T) {
	t.Parallel()
	m := RegisterMetrics(metrics.NewRegistry())
	r := &Result{OK: true, API: Rerank, E2E: 12, PromptTokens: 56, Documents: 3, Start: time.Now()}
	names := map[string]float64{}
	for _, s := range m.AppendSamples(nil, metrics.NewTagSet(nil), r) {
		names[s.Metric.Name] += s.Value
	}
	if _, ok := names["llm_ttft"]; ok || names["llm_documents"] != 3 || names["llm_prompt_tokens"] != 56 || names["llm_e2e"] != 12 {
		t.Errorf("samples %v", names)
	}
	failed := &Result{API: Rerank, Class: ErrHTTP5xx, Documents: 3, Start: time.Now()}
	for _, s := range m.AppendSamples(nil, metrics.NewTagSet(nil), failed) {
		if s.Metric.Name == "llm_documents" {
			t.Errorf("a failed request counted its documents")
		}
	}
}
