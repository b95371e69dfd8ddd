// Package llmsimtest starts the built-in simulator for tests: on
// 127.0.0.1, on a port of its own choosing, closed when the test ends.
package llmsimtest

import (
	"context"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
)

// Fast is the simulator's default configuration with 1 ms prefill and
// decode steps that do not grow with the prompt or the batch: a stream
// of a few tokens ends in milliseconds.
func Fast() llmsim.Config {
	cfg := llmsim.DefaultConfig()
	cfg.PrefillBase, cfg.PrefillPerToken = time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = time.Millisecond, 0
	return cfg
}

// Start starts a simulator with cfg on 127.0.0.1 and closes it when the
// test ends; a simulator that cannot start fails the test.
func Start(tb testing.TB, cfg llmsim.Config) *llmsim.Running {
	tb.Helper()
	srv, err := llmsim.Listen(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		tb.Fatalf("starting the simulator: %v", err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}
