package llmsim

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// MaxRerankDocuments bounds the documents of one rerank request: more are
// refused with 400.
const MaxRerankDocuments = 1024

// rerankRequest is the part of a rerank request llmsim honours, in
// vLLM's shape (documents, top_n) or TEI's (texts, raw_scores,
// return_text).
type rerankRequest struct {
	Model      string    `json:"model"`
	Query      *string   `json:"query"`
	Documents  *[]string `json:"documents"`
	TopN       int       `json:"top_n"`
	Texts      *[]string `json:"texts"`
	RawScores  bool      `json:"raw_scores"`
	ReturnText bool      `json:"return_text"`
}

// rerankScore is one document's score.
type rerankScore struct {
	index int
	score float64
}

// vllmRerankResult is one result of vLLM's (Jina/Cohere-style) rerank
// response.
type vllmRerankResult struct {
	Index    int `json:"index"`
	Document struct {
		Text string `json:"text"`
	} `json:"document"`
	RelevanceScore float64 `json:"relevance_score"`
}

// teiRank is one result of TEI's rerank response.
type teiRank struct {
	Index int     `json:"index"`
	Text  *string `json:"text,omitempty"`
	Score float64 `json:"score"`
}

// rerank answers POST /v1/rerank, /v2/rerank and /rerank: vLLM's
// (Jina/Cohere-style) body with "documents", or TEI's with "texts",
// answered in the shape of the one asked. Like embeddings, it is a
// prefill-only job of the tokens of every (query, document) pair, which a
// cross-encoder reads together; usage.total_tokens reports them (vLLM's
// shape; TEI's has no usage). The scores are pseudo-random in (0, 1),
// the same for the same query, document and Config.Seed; raw_scores
// gives their logits. Results come best first, cut to top_n when it is
// positive.
func (s *Server) rerank(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	data, aerr := readBody(w, r)
	var body rerankRequest
	j := job{model: s.cfg.Model}
	if aerr == nil {
		if err := json.Unmarshal(data, &body); err != nil {
			aerr = badRequest("", "invalid request body: %v", err)
		}
	}
	tei := body.Texts != nil
	var docs []string
	if aerr == nil {
		if body.Model != "" {
			j.model = body.Model
		}
		aerr = body.check()
		if tei {
			docs = *body.Texts
		} else if body.Documents != nil {
			docs = *body.Documents
		}
	}
	if aerr == nil {
		j.promptTokens, aerr = s.rerankTokens(*body.Query, docs, body.documentsField())
	}
	arrival, ok := s.prefill(w, r, arrived, &j, aerr)
	if !ok {
		return
	}

	scores := make([]rerankScore, len(docs))
	for i, doc := range docs {
		scores[i] = rerankScore{i, relevance(s.cfg.Seed, *body.Query, doc)}
	}
	slices.SortStableFunc(scores, func(a, b rerankScore) int { return cmp.Compare(b.score, a.score) })
	if tei {
		ranks := make([]teiRank, len(scores))
		for i, sc := range scores {
			ranks[i] = teiRank{Index: sc.index, Score: sc.score}
			if body.RawScores {
				ranks[i].Score = math.Log(sc.score / (1 - sc.score))
			}
			if body.ReturnText {
				ranks[i].Text = &docs[sc.index]
			}
		}
		writeJSON(w, http.StatusOK, ranks)
		return
	}
	if body.TopN > 0 && body.TopN < len(scores) {
		scores = scores[:body.TopN]
	}
	results := make([]vllmRerankResult, len(scores))
	for i, sc := range scores {
		results[i].Index, results[i].RelevanceScore = sc.index, sc.score
		results[i].Document.Text = docs[sc.index]
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "rerank-" + strconv.FormatUint(arrival, 10), "model": j.model,
		"usage":   map[string]int{"total_tokens": j.promptTokens},
		"results": results,
	})
}

// documentsField is the field of the request's documents: "texts" in
// TEI's shape, "documents" in vLLM's.
func (b *rerankRequest) documentsField() string {
	if b.Texts != nil {
		return "texts"
	}
	return "documents"
}

// check validates a rerank request's shape.
func (b *rerankRequest) check() *apiError {
	field, docs := b.documentsField(), b.Documents
	if b.Texts != nil {
		docs = b.Texts
	}
	switch {
	case b.Query == nil:
		return badRequest("query", "query is required")
	case b.Texts != nil && b.Documents != nil:
		return badRequest("texts", `give "documents" (vLLM's rerank) or "texts" (TEI's), not both`)
	case docs == nil || len(*docs) == 0:
		return badRequest(field, "%s must be a non-empty array of strings", field)
	case len(*docs) > MaxRerankDocuments:
		return badRequest(field, "%d documents: at most %d are taken", len(*docs), MaxRerankDocuments)
	case b.TopN < 0:
		return badRequest("top_n", "top_n must not be negative, got %d", b.TopN)
	}
	return nil
}

// rerankTokens counts the tokens of every (query, document) pair, each
// of which must fit the model's context; field names the documents in
// its errors.
func (s *Server) rerankTokens(query string, docs []string, field string) (int, *apiError) {
	q, err := s.prompter.plain(query)
	if err != nil {
		return 0, badRequest("query", "%v", err)
	}
	total := 0
	for i, doc := range docs {
		d, err := s.prompter.plain(doc)
		if err != nil {
			return 0, badRequest(field, "%s[%d]: %v", field, i, err)
		}
		if q+d > s.cfg.MaxModelLen {
			return 0, badRequest(field, "This model's maximum context length is %d tokens. However, the query and %s[%d] have %d tokens. Please reduce the length of the input.", s.cfg.MaxModelLen, field, i, q+d)
		}
		total += q + d
	}
	return total, nil
}

// relevance is the score of doc for query: pseudo-random in (0, 1) from
// seed and their bytes.
func relevance(seed int64, query, doc string) float64 {
	h := fnv.New64a()
	binary.Write(h, binary.LittleEndian, seed) // a hash's Write never fails
	h.Write([]byte(query))
	h.Write([]byte{0})
	h.Write([]byte(doc))
	return (float64(h.Sum64()>>11) + 0.5) / (1 << 53)
}
