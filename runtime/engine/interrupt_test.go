package engine

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineSignal is a log writer that closes seen when a line containing want
// is written.
type lineSignal struct {
	want string
	once sync.Once
	seen chan struct{}
}

func newLineSignal(want string) *lineSignal {
	return &lineSignal{want: want, seen: make(chan struct{})}
}

func (w *lineSignal) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// A signal while teardown() loops stops it InterruptGrace later, whatever
// teardownTimeout says.
func TestTeardownEndsAGraceAfterTheInterruption(t *testing.T) {
	cfg := testConfig(t, `
export const options = { teardownTimeout: '1h' };
export default function () {}
export function teardown() { console.log('teardown started'); for (;;) {} }
`, nil, nil)
	started := newLineSignal("teardown started")
	cfg.Logger = slog.New(slog.NewTextHandler(started, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := load(t, cfg)
	e.interruptGrace = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-started.seen
		cancel()
	}()
	_, err := runBounded(t, ctx, e)
	if err == nil || !strings.Contains(err.Error(), "teardown() stopped 200ms after the interruption") {
		t.Fatalf("Run error = %v, want teardown() stopped 200ms after the interruption", err)
	}
}

// handleSummary() called after an interruption gets InterruptGrace, not
// its two minutes.
func TestHandleSummaryEndsAGraceAfterTheInterruption(t *testing.T) {
	e := loadForSummary(t, `export default function () {}
export function handleSummary() { for (;;) {} }`)
	e.interruptGrace = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.HandleSummary(ctx, []byte(`{}`))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "handleSummary() stopped 200ms after the interruption") {
			t.Fatalf("HandleSummary error = %v, want it stopped 200ms after the interruption", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("HandleSummary still running 60s after the interruption")
	}
}

// A signal while setup() loops stops it at once, whatever setupTimeout
// says, and no scenario runs.
func TestSetupStopsAtTheInterruption(t *testing.T) {
	logs := &logBuffer{}
	started := newLineSignal("setup started")
	cfg := testConfig(t, `
export const options = { setupTimeout: '1h' };
export function setup() { console.log('setup started'); for (;;) {} }
export default function () { console.log('iteration ran'); }
`, nil, nil)
	cfg.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(started, logs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := load(t, cfg)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-started.seen
		cancel()
	}()
	rep, err := runBounded(t, ctx, e)
	if err == nil || rep == nil || !rep.Interrupted {
		t.Fatalf("Run = %+v, %v; want an interrupted report and an error", rep, err)
	}
	if strings.Contains(logs.String(), "iteration ran") {
		t.Errorf("an iteration ran after setup() was interrupted:\n%s", logs.String())
	}
}
