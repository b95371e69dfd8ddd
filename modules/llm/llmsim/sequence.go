package llmsim

import (
	"context"
	"sync/atomic"
)

// sequence is one request inside the engine. The engine writes produced and
// signals ready; the request's handler waits on them (engine.wait).
type sequence struct {
	promptTokens int
	outputTokens int
	// done is closed when the request's client has gone.
	done <-chan struct{}
	// produced counts the tokens generated so far.
	produced atomic.Int64
	// ready (capacity 1) is signalled whenever produced grows, so the
	// engine never blocks on a slow handler: tokens made while the handler
	// is busy are picked up together at its next wait.
	ready chan struct{}
}

// newSequence returns a sequence that lives as long as ctx.
func newSequence(ctx context.Context, promptTokens, outputTokens int) *sequence {
	return &sequence{
		promptTokens: promptTokens,
		outputTokens: outputTokens,
		done:         ctx.Done(),
		ready:        make(chan struct{}, 1),
	}
}

// gone reports whether the sequence's client has gone.
func (s *sequence) gone() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// finished reports whether all the sequence's tokens are generated.
func (s *sequence) finished() bool {
	return s.produced.Load() == int64(s.outputTokens)
}

// advance records one generated token and signals the handler.
func (s *sequence) advance() {
	s.produced.Add(1)
	select {
	case s.ready <- struct{}{}:
	default:
	}
}
