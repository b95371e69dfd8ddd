package llmsim

import (
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// Server is a simulated inference server: an HTTP handler in front of one
// engine goroutine. New starts the engine; Close stops it.
type Server struct {
	cfg      Config
	prompter *prompter
	engine   *engine
	handler  http.Handler
	started  time.Time

	arrivals atomic.Uint64 // numbers the accepted generation requests
	rejected atomic.Uint64
	// abandoned counts the requests whose client left during
	// slow_headers, before they reached the engine.
	abandoned atomic.Uint64
	// givenUp counts the requests whose client left before their sound
	// answer was delivered (Stats.GivenUp).
	givenUp atomic.Uint64

	firstTokens    atomic.Uint64 // streams whose first token was flushed
	firstTokenNano atomic.Int64  // their summed arrival → first-token-flushed times
	flushGaps      atomic.Uint64 // later flushes of tokens
	flushGapNano   atomic.Int64  // their summed times since the stream's previous flush

	faults map[string]*atomic.Uint64 // injected faults by name; keys fixed by New

	gpus []gpuIdentity // the simulated GPUs of GET /dcgm/metrics

	stored responseStore // the Responses API's responses, by id
}

// recordFirstToken notes a stream's server-side TTFT.
func (s *Server) recordFirstToken(d time.Duration) {
	s.firstTokens.Add(1)
	s.firstTokenNano.Add(int64(d))
}

// recordFlushGap notes the time between two flushes of a stream's tokens.
func (s *Server) recordFlushGap(d time.Duration) {
	s.flushGaps.Add(1)
	s.flushGapNano.Add(int64(d))
}

// Stats is a snapshot of a Server's counters.
type Stats struct {
	Received  uint64 // generation requests queued
	Rejected  uint64 // generation requests answered 400
	Waiting   int    // requests in the waiting queue now
	Running   int    // sequences holding a batch slot now
	Completed uint64 // sequences that generated all their tokens
	Canceled  uint64 // sequences dropped because their client went away
	// GivenUp counts the requests whose client left before their answer
	// was delivered while it was still sound (no fault had struck it):
	// in the engine's queue, during generation, or with its last tokens
	// unwritten. A client's timeout on a machine too slow for it, or its
	// interruption.
	GivenUp      uint64
	Abandoned    uint64 // requests whose client went away during slow_headers, never queued
	Tokens       uint64 // tokens generated
	PrefillSteps uint64 // engine steps that admitted requests
	DecodeSteps  uint64 // engine steps that generated a token per sequence
	// FirstTokens counts streams whose first token was flushed; their
	// mean server-side TTFT (request arrival to first token flushed) is
	// TTFTSum / FirstTokens. Clients compare it with the TTFT they
	// measure to see their own overhead.
	FirstTokens uint64
	TTFTSum     time.Duration
	// FlushGaps counts the flushes of tokens after each stream's first;
	// their mean server-side gap (previous flush to this one, the
	// server's inter-token latency when a chunk carries one token) is
	// FlushGapSum / FlushGaps.
	FlushGaps   uint64
	FlushGapSum time.Duration
	// PrefixCacheQueries counts the prompt tokens of the requests
	// admitted while the prefix cache is on, PrefixCacheHits those found
	// in it: the hit rate is PrefixCacheHits / PrefixCacheQueries.
	// PrefixCacheBlocks is the blocks it holds now.
	PrefixCacheQueries uint64
	PrefixCacheHits    uint64
	PrefixCacheBlocks  int
	// Faults counts the faults injected, by name; faults never injected
	// are left out. A mid-stream fault counts when it strikes, not when a
	// stream that ended first drew it.
	Faults map[string]uint64
	// InstanceID is Config.InstanceID: who the simulator is.
	InstanceID string
}

// New validates cfg and returns a Server whose engine is running.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Faults = slices.Clone(cfg.Faults)
	p, err := newPrompter(&cfg)
	if err != nil {
		return nil, err
	}
	if p.tok == nil {
		cfg.PrefixCacheBlocks = 0 // no token ids, no prefix cache
	}
	s := &Server{cfg: cfg, prompter: p, engine: startEngine(cfg), started: time.Now(), faults: map[string]*atomic.Uint64{},
		gpus: newGPUIdentities(cfg.GPUs, cfg.Seed)}
	for name := range faultParams {
		s.faults[name] = new(atomic.Uint64)
	}
	s.handler = s.routes()
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	e := s.engine
	faults := map[string]uint64{}
	for name, n := range s.faults {
		if v := n.Load(); v > 0 {
			faults[name] = v
		}
	}
	return Stats{
		Received:     e.received.Load(),
		Rejected:     s.rejected.Load(),
		Waiting:      e.queued(),
		Running:      int(e.nRunning.Load()),
		Completed:    e.completed.Load(),
		Canceled:     e.canceled.Load(),
		GivenUp:      s.givenUp.Load(),
		Abandoned:    s.abandoned.Load(),
		Tokens:       e.tokens.Load(),
		PrefillSteps: e.prefillSteps.Load(),
		DecodeSteps:  e.decodeSteps.Load(),
		FirstTokens:  s.firstTokens.Load(),
		TTFTSum:      time.Duration(s.firstTokenNano.Load()),
		FlushGaps:    s.flushGaps.Load(),
		FlushGapSum:  time.Duration(s.flushGapNano.Load()),
		Faults:       faults,
		InstanceID:   s.cfg.InstanceID,

		PrefixCacheQueries: e.prefixQueries.Load(),
		PrefixCacheHits:    e.prefixHits.Load(),
		PrefixCacheBlocks:  int(e.prefixBlocks.Load()),
	}
}

// Close stops the engine and waits for it. Unfinished streams end at once,
// without their final chunks and [DONE]; unfinished non-streamed requests
// and later ones get 503. Close is idempotent.
func (s *Server) Close() { s.engine.stop() }
