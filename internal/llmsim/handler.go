package llmsim

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// routes returns the server's endpoints.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s.generate(w, r, chatAPI)
	})
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) {
		s.generate(w, r, completionsAPI)
	})
	for path, a := range map[string]*api{
		"POST /api/chat":        ollamaChatAPI,
		"POST /api/generate":    ollamaGenerateAPI,
		"POST /generate_stream": tgiAPI,
		"POST /v1/messages":     anthropicAPI,
		"POST /v1/responses":    responsesAPI,
	} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, a) })
	}
	s.tritonRoutes(mux)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	for _, path := range []string{"POST /v1/rerank", "POST /v2/rerank", "POST /rerank"} {
		mux.HandleFunc(path, s.rerank)
	}
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.Stats()) })
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) { writeFamilies(w, s.vllmFamilies()) })
	mux.HandleFunc("GET "+DCGMPath, func(w http.ResponseWriter, _ *http.Request) { writeFamilies(w, s.dcgmFamilies(time.Now())) })
	return mux
}

// completion is one generation request being answered.
type completion struct {
	api     *api
	job     job
	id      string
	created int64
	text    textSource
	finish  string
	seq     *sequence
	engine  *engine
	arrived time.Time
	server  *Server
	// fault is the mid-stream fault the stream meets, nil for none.
	fault *Fault
	// timedFirst is set once the first token is flushed and timed;
	// flushedTokens and lastFlush are the tokens flushed so far and when
	// the last of them was, for the gaps between flushes.
	timedFirst    bool
	flushedTokens int
	lastFlush     time.Time
}

// tokenCounts are a response's token counts, for its usage.
type tokenCounts struct {
	prompt, output int
	// cached is the share of prompt served from the prefix cache, -1 when
	// the cache is off (usage then leaves it out).
	cached int
}

// counts returns c's token counts. The cached prompt tokens are known
// once the engine admitted c: before its first token, they read 0.
func (c *completion) counts() tokenCounts {
	n := tokenCounts{prompt: c.job.promptTokens, output: c.seq.outputTokens, cached: -1}
	if c.job.cacheable {
		n.cached = int(c.seq.cached.Load())
	}
	return n
}

// generate answers a chat or completions request. A fault that the
// request asks for or draws and that strikes before the engine answers it;
// otherwise the request is queued in the engine, and its tokens are
// streamed or returned as the engine makes them, meeting a mid-stream
// fault on the way.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, a *api) {
	arrived := time.Now()
	data, aerr := readBody(w, r)
	var j job
	switch {
	case aerr != nil:
	case a.parse != nil:
		j, aerr = a.parse(data, s)
	default:
		j, aerr = parseJob(data, a.chat, s)
	}
	if aerr == nil && a.streamOnly && !j.stream {
		aerr = badRequest("stream", "llmsim answers this API streamed only")
	}
	arrival, f, ok := s.accept(w, r, &j, aerr, j.stream)
	if !ok {
		return
	}

	// Canceled when the handler returns, so the engine frees the slot of
	// a request abandoned for any reason.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if f != nil && !f.midStream() {
		if !s.intercept(ctx, w, f) {
			return
		}
		f = nil
	}
	text := newTextSource(s.cfg.Seed, arrival)
	outputTokens, finish := text.length(&j, s.cfg.OutputMean)
	c := completion{
		api:     a,
		job:     j,
		id:      a.idPrefix + strconv.FormatUint(arrival, 10),
		created: time.Now().Unix(),
		text:    text,
		finish:  finish,
		seq:     newSequence(ctx, j.promptTokens, outputTokens).withBlocks(j.blocks, j.cacheable).from(arrived, finish),
		engine:  s.engine,
		arrived: arrived,
		server:  s,
		fault:   f,
	}
	if err := s.engine.submit(c.seq); err != nil {
		unavailable(err).write(w)
		return
	}
	var gaveUp bool
	if j.stream {
		gaveUp = c.stream(ctx, w)
	} else {
		gaveUp = c.respond(ctx, w)
	}
	if gaveUp {
		s.givenUp.Add(1)
	}
}

// models answers GET /v1/models.
func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		MaxModelLen int    `json:"max_model_len"`
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{s.cfg.Model, "model", s.started.Unix(), "llmsim", s.cfg.MaxModelLen}}})
}

// writeJSON sends v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// accept settles a parsed request: it answers a rejected one (aerr, or a
// bad fault header) itself and reports ok false; otherwise it numbers the
// arrival and returns the fault to inject, the one the request asked for
// or one drawn at the configured rates (mid-stream faults only for a
// streamed request), nil for none.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, j *job, aerr *apiError, streamed bool) (arrival uint64, f *Fault, ok bool) {
	if aerr == nil {
		f, aerr = requestedFault(r, j)
	}
	if aerr != nil {
		s.rejected.Add(1)
		aerr.write(w)
		return 0, nil, false
	}
	arrival = s.arrivals.Add(1)
	if f == nil {
		f = s.drawFault(arrival, streamed)
	}
	return arrival, f, true
}
