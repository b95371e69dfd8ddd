package llmsim

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// DefaultEmbeddingDimensions is the dimension of the vectors POST
// /v1/embeddings returns when the request names no "dimensions".
const DefaultEmbeddingDimensions = 768

// maxEmbeddingDimensions bounds a request's "dimensions".
const maxEmbeddingDimensions = 1 << 16

// embeddingsRequest is the part of an OpenAI embeddings request llmsim
// honours.
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     *int            `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

// embeddingInputs splits an embeddings input into its items (a string, an
// array of strings, an array of token ids or an array of such arrays),
// each with its token count, by p, and the bytes that seed its vector.
func embeddingInputs(raw json.RawMessage, p *prompter) (seeds [][]byte, tokens []int, err error) {
	var one string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &one) == nil {
		n, err := p.plain(one)
		if err != nil {
			return nil, nil, err
		}
		return [][]byte{[]byte(one)}, []int{n}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 {
		return nil, nil, errors.New("input must be a non-empty string, array of strings, array of token ids or array of token id arrays")
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil { // one tokenized input
		return [][]byte{raw}, []int{len(ids)}, nil
	}
	for _, item := range items {
		var s string
		if len(item) > 0 && item[0] == '"' && json.Unmarshal(item, &s) == nil {
			n, err := p.plain(s)
			if err != nil {
				return nil, nil, err
			}
			seeds, tokens = append(seeds, []byte(s)), append(tokens, n)
			continue
		}
		if json.Unmarshal(item, &ids) != nil || len(ids) == 0 {
			return nil, nil, errors.New("each input item must be a string or a non-empty array of token ids")
		}
		seeds, tokens = append(seeds, item), append(tokens, len(ids))
	}
	return seeds, tokens, nil
}

// embeddings answers POST /v1/embeddings: a prefill-only job, whose cost
// in the engine is the prefill step of its inputs' tokens (the engine
// counts it as one sequence of one token). The vectors are pseudo-random,
// of unit length, and the same for the same input text and Config.Seed.
// Faults that strike before the engine apply; mid-stream ones do not (a
// header asking for one is refused, a drawn one is skipped).
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	data, aerr := readBody(w, r)
	var body embeddingsRequest
	var seeds [][]byte
	var tokens []int
	j := job{model: s.cfg.Model}
	if aerr == nil {
		if err := json.Unmarshal(data, &body); err != nil {
			aerr = badRequest("", "invalid request body: %v", err)
		}
	}
	dims := DefaultEmbeddingDimensions
	if aerr == nil {
		if body.Model != "" {
			j.model = body.Model
		}
		var err error
		switch seeds, tokens, err = embeddingInputs(body.Input, s.prompter); {
		case err != nil:
			aerr = badRequest("input", "%v", err)
		case body.Dimensions != nil && (*body.Dimensions < 1 || *body.Dimensions > maxEmbeddingDimensions):
			aerr = badRequest("dimensions", "dimensions must be between 1 and %d, got %d", maxEmbeddingDimensions, *body.Dimensions)
		case body.EncodingFormat != "" && body.EncodingFormat != "float" && body.EncodingFormat != "base64":
			aerr = badRequest("encoding_format", `encoding_format must be "float" or "base64", got %q`, body.EncodingFormat)
		}
		if body.Dimensions != nil {
			dims = *body.Dimensions
		}
	}
	if aerr == nil {
		for _, n := range tokens {
			if n > s.cfg.MaxModelLen {
				aerr = badRequest("input", "This model's maximum context length is %d tokens. However, an input has %d tokens. Please reduce the length of the input.", s.cfg.MaxModelLen, n)
				break
			}
			j.promptTokens += n
		}
	}
	if _, ok := s.prefill(w, r, arrived, &j, aerr); !ok {
		return
	}

	model, _ := json.Marshal(j.model) // a string always marshals
	out := make([]byte, 0, 64+len(seeds)*(dims*12+64))
	out = append(out, `{"object":"list","data":[`...)
	vec := make([]float32, dims)
	for i, seed := range seeds {
		if i > 0 {
			out = append(out, ',')
		}
		embedding(vec, s.cfg.Seed, seed)
		out = strconv.AppendInt(append(out, `{"object":"embedding","index":`...), int64(i), 10)
		out = append(out, `,"embedding":`...)
		if body.EncodingFormat == "base64" {
			raw := make([]byte, 4*dims)
			for k, v := range vec {
				binary.LittleEndian.PutUint32(raw[4*k:], math.Float32bits(v))
			}
			out = append(out, '"')
			out = base64.StdEncoding.AppendEncode(out, raw)
			out = append(out, '"')
		} else {
			out = append(out, '[')
			for k, v := range vec {
				if k > 0 {
					out = append(out, ',')
				}
				out = strconv.AppendFloat(out, float64(v), 'g', -1, 32)
			}
			out = append(out, ']')
		}
		out = append(out, '}')
	}
	out = append(out, `],"model":`...)
	out = append(out, model...)
	out = strconv.AppendInt(append(out, `,"usage":{"prompt_tokens":`...), int64(j.promptTokens), 10)
	out = strconv.AppendInt(append(out, `,"total_tokens":`...), int64(j.promptTokens), 10)
	out = append(out, "}}"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// prefill runs a prefill-only job (embeddings, rerank) that arrived at
// arrived: it answers aerr, or a fault that strikes before the engine,
// and reports false; else it waits for one prefill step of j's prompt
// tokens in the engine (which counts it as a one-token sequence) and
// returns the request's arrival number, for its id. Mid-stream faults do
// not apply (a header asking for one is refused, a drawn one is skipped).
func (s *Server) prefill(w http.ResponseWriter, r *http.Request, arrived time.Time, j *job, aerr *apiError) (uint64, bool) {
	arrival, f, ok := s.accept(w, r, j, aerr, false)
	if !ok {
		return 0, false
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if f != nil && !s.intercept(ctx, w, f) {
		return 0, false
	}
	seq := newSequence(ctx, j.promptTokens, 1).from(arrived, "stop")
	if err := s.engine.submit(seq); err != nil {
		unavailable(err).write(w)
		return 0, false
	}
	if _, err := s.engine.wait(ctx, seq, 0); err != nil {
		if ctx.Err() == nil {
			unavailable(err).write(w)
		}
		return 0, false
	}
	return arrival, true
}

// embedding fills vec with a pseudo-random unit vector drawn from seed and
// the input's bytes.
func embedding(vec []float32, seed int64, input []byte) {
	h := fnv.New64a()
	h.Write(input)
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	var norm float64
	for k := range vec {
		v := rng.NormFloat64()
		vec[k] = float32(v)
		norm += v * v
	}
	if norm = math.Sqrt(norm); norm > 0 {
		for k := range vec {
			vec[k] = float32(float64(vec[k]) / norm)
		}
	}
}
