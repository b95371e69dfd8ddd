package llmsim

import (
	"context"
	"sync/atomic"
	"time"
)

// sequence is one request inside the engine. The engine writes produced and
// signals ready; the request's handler waits on them (engine.wait).
//
// The fields every decode step reads come first, in one cache line.
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
	// lastToken is when the last token was made, kvShared how many of
	// blocks hold a reference in the engine's KV accounting and kvPrivate
	// the blocks it holds alone: the engine goroutine's.
	lastToken           time.Duration
	kvShared, kvPrivate int

	// blocks are the hashes of the prompt's full blocks, looked up in the
	// prefix cache when cacheable (see prompt).
	blocks    []uint64
	cacheable bool
	// cached is the prompt tokens found in the prefix cache, set by the
	// engine when it admits the sequence.
	cached atomic.Int64

	// arrived is when the request reached the server and finish the
	// finished_reason it gets when all its tokens are generated: set
	// before it is submitted, for the engine's metrics.
	arrived time.Time
	finish  string
	// The request's timeline as vLLM's metrics divide it, in time since
	// the engine's epoch: arrival and queued by submit; scheduled
	// (admitted), firstToken and lastToken by the engine goroutine.
	arrival, queued, scheduled, firstToken time.Duration
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

// from sets when the request arrived and the finished_reason it ends
// with, and returns s.
func (s *sequence) from(arrived time.Time, finish string) *sequence {
	s.arrived, s.finish = arrived, finish
	return s
}

// withBlocks sets the prompt's prefix-cache blocks and returns s.
func (s *sequence) withBlocks(blocks []uint64, cacheable bool) *sequence {
	s.blocks, s.cacheable = blocks, cacheable
	return s
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
