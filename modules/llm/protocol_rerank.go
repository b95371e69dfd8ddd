package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"reflect"
)

// Rerank is the Jina/Cohere-style rerank API of vLLM (and of gateways
// in front of Cohere, Jina or Infinity): POST /v1/rerank with {"model",
// "query", "documents": [...], "top_n"?, "return_documents"?}, answered
// with one JSON object {"id", "model", "usage": {"total_tokens"},
// "results": [{"index", "document"?: {"text"}, "relevance_score"}]}.
const Rerank API = "rerank"

// TEIRerank is Hugging Face Text Embeddings Inference's POST /rerank
// with {"query", "texts": [...], "raw_scores"?, "return_text"?,
// "truncate"?}, answered with a JSON array [{"index", "score",
// "text"?}].
const TEIRerank API = "tei-rerank"

// RerankScore is one document's place in a rerank response: its index
// in the request's documents and the relevance score the server gave it.
type RerankScore struct {
	Index int     `json:"index"`
	Score float64 `json:"score"`
}

// rerankProtocol reads both rerank APIs. Nothing is streamed nor
// generated: the Result has E2E (TTFT, TPOT and ITL stay 0, with no
// samples, as for embeddings), the number of documents sent (Documents),
// the scores as the server ordered them (Rerank) and, from vLLM's usage,
// the tokens of the query and documents (PromptTokens).
type rerankProtocol struct{}

// endpoint puts /rerank under the API root (".../v1") for Rerank and
// under the server's root for TEIRerank.
func (rerankProtocol) endpoint(base *url.URL, api API, _ bool) string {
	if api == TEIRerank {
		return serverRoot(base, false).JoinPath("rerank").String()
	}
	root := v1Root(base)
	return root.JoinPath("rerank").String()
}

// rerankDocumentsField is the body's field holding the documents, by API.
func rerankDocumentsField(api API) string {
	if api == TEIRerank {
		return "texts"
	}
	return "documents"
}

// prepare checks the body has a query and an array of documents, counts
// them, and adds the client's model to a Rerank body unless it names one
// (TEI serves one model and takes none). The request is never streamed.
func (rerankProtocol) prepare(p *prepared, body map[string]any, model string) error {
	if _, ok := body["stream"]; ok {
		return fmt.Errorf(`the %s API does not stream: remove "stream" from the body`, p.api)
	}
	if _, ok := body["query"]; !ok {
		return fmt.Errorf(`the %s API needs "query" in the body`, p.api)
	}
	field := rerankDocumentsField(p.api)
	docs := reflect.ValueOf(body[field])
	if docs.Kind() != reflect.Slice || docs.Len() == 0 {
		return fmt.Errorf(`the %s API needs "%s" in the body: a non-empty array of documents`, p.api, field)
	}
	p.stream = false
	p.documents = docs.Len()
	if p.api == TEIRerank {
		p.model = model
		return nil
	}
	p.model = defaultModel(body, model)
	return nil
}

// rerankResult is one result of either API: vLLM's relevance_score or
// TEI's score.
type rerankResult struct {
	Index          *int     `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
	Score          *float64 `json:"score"`
}

// rerankResponse is a whole vLLM/Cohere rerank response.
type rerankResponse struct {
	Results []rerankResult `json:"results"`
	Usage   *struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// read reads the whole JSON response: an object for Rerank, an array for
// TEIRerank.
func (rerankProtocol) read(rr *responseReader, contentType string, body io.Reader, _ bool, res *Result) error {
	if !isJSON(mediaType(contentType)) {
		return contentTypeError(res, contentType, "application/json")
	}
	var r rerankResponse
	decode := func(doc []byte) error { return json.Unmarshal(doc, &r) }
	if res.API == TEIRerank {
		decode = func(doc []byte) error { return json.Unmarshal(doc, &r.Results) }
	}
	if err := rr.readWhole(body, res.Start, res, decode); err != nil {
		return err
	}
	if present(r.Error) {
		return responseErrorFailure(r.Error)
	}
	if r.Results == nil {
		return &failure{ErrDecode, fmt.Errorf(`response without results: %s`, snippet(rr.body))}
	}
	if len(r.Results) > res.Documents {
		return &failure{ErrDecode, fmt.Errorf("%d results for %d documents", len(r.Results), res.Documents)}
	}
	scores := make([]RerankScore, len(r.Results))
	for i, result := range r.Results {
		score := result.RelevanceScore
		if res.API == TEIRerank {
			score = result.Score
		}
		switch {
		case result.Index == nil || score == nil:
			return &failure{ErrDecode, fmt.Errorf("results[%d]: want an index and a score, got %s", i, snippet(rr.body))}
		case *result.Index < 0 || *result.Index >= res.Documents:
			return &failure{ErrDecode, fmt.Errorf("results[%d]: index %d is not one of the %d documents", i, *result.Index, res.Documents)}
		}
		scores[i] = RerankScore{Index: *result.Index, Score: *score}
	}
	res.Rerank = scores
	if r.Usage != nil {
		res.PromptTokens = r.Usage.TotalTokens
	}
	return nil
}
