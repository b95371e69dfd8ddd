package llmsim

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
)

func TestRelevance(t *testing.T) {
	a, b := relevance(1, "q", "doc"), relevance(1, "q", "doc")
	if a != b || a <= 0 || a >= 1 {
		t.Errorf("relevance %v then %v, want the same in (0, 1)", a, b)
	}
	for _, other := range []float64{relevance(2, "q", "doc"), relevance(1, "q", "doc2"), relevance(1, "qd", "oc")} {
		if other == a {
			t.Errorf("another seed, document or split gave the same score %v", a)
		}
	}
}

// Each route answers in the shape its body asks: vLLM's (documents) with
// usage and documents, best first and cut to top_n; TEI's (texts) as a
// bare array, with texts and logits on request.
func TestRerankShapes(t *testing.T) {
	r := listen(t, fastConfig())
	docs := []string{"alpha", "beta", "gamma"}
	for _, path := range []string{"/v1/rerank", "/v2/rerank", "/rerank"} {
		var got struct {
			ID    string `json:"id"`
			Model string `json:"model"`
			Usage struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
			Results []struct {
				Index          int                   `json:"index"`
				Document       struct{ Text string } `json:"document"`
				RelevanceScore float64               `json:"relevance_score"`
			} `json:"results"`
		}
		postDecode(t, r.URL(), path, map[string]any{"model": "rr", "query": "q", "documents": docs, "top_n": 2}, &got)
		if got.Model != "rr" || got.ID == "" || got.Usage.TotalTokens != 6 || len(got.Results) != 2 ||
			got.Results[0].RelevanceScore < got.Results[1].RelevanceScore || got.Results[0].Document.Text != docs[got.Results[0].Index] {
			t.Errorf("%s: %+v", path, got)
		}
	}
	var plain, raw []struct {
		Index int     `json:"index"`
		Text  *string `json:"text"`
		Score float64 `json:"score"`
	}
	postDecode(t, r.URL(), "/rerank", map[string]any{"query": "q", "texts": docs}, &plain)
	postDecode(t, r.URL(), "/rerank", map[string]any{"query": "q", "texts": docs, "raw_scores": true, "return_text": true}, &raw)
	if len(plain) != 3 || len(raw) != 3 || plain[0].Text != nil || raw[0].Text == nil || *raw[0].Text != docs[raw[0].Index] {
		t.Fatalf("plain %+v, raw %+v", plain, raw)
	}
	if logit := math.Log(plain[0].Score / (1 - plain[0].Score)); math.Abs(raw[0].Score-logit) > 1e-9 || plain[0].Score < plain[2].Score {
		t.Errorf("raw score %v, want the logit %v of %v", raw[0].Score, logit, plain[0].Score)
	}
}

func TestRerankRefusals(t *testing.T) {
	r := listen(t, fastConfig())
	many := make([]string, MaxRerankDocuments+1)
	for _, body := range []map[string]any{
		{"documents": []string{"a"}},
		{"query": "q"},
		{"query": "q", "documents": []string{}},
		{"query": "q", "documents": many},
		{"query": "q", "documents": []string{"a"}, "texts": []string{"a"}},
		{"query": "q", "documents": []string{"a"}, "top_n": -1},
		{"query": "q", "documents": []int{1}},
	} {
		resp, err := post(t.Context(), testClient(t), r.URL(), "/v1/rerank", body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%v: %d %s, want 400", body, resp.StatusCode, b)
		}
	}
}

// postDecode posts body to path and decodes a 200 answer into v.
func postDecode(t *testing.T, url, path string, body, v any) {
	t.Helper()
	resp, err := post(t.Context(), testClient(t), url, path, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v: %s", path, err, b)
	}
}

// A document past the context is refused naming the field it came in:
// "texts" for TEI's shape, "documents" for vLLM's.
func TestRerankTooLongNamesItsField(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.MaxModelLen = 64
	r := listen(t, cfg)
	long := strings.Repeat("word ", 200)
	for _, field := range []string{"documents", "texts"} {
		resp, err := post(t.Context(), testClient(t), r.URL(), "/v1/rerank", map[string]any{"query": "q", field: []string{"short", long}})
		if err != nil {
			t.Fatal(err)
		}
		var reply struct {
			Error struct {
				Message string  `json:"message"`
				Param   *string `json:"param"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&reply)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || err != nil || reply.Error.Param == nil || *reply.Error.Param != field ||
			!strings.Contains(reply.Error.Message, "the query and "+field+"[1] have") {
			t.Errorf("%s: %d %+v (%v), want a 400 naming %s[1]", field, resp.StatusCode, reply.Error, err, field)
		}
	}
}
