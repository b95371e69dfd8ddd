package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/dop251/goja"
)

// A VU's calls under one context share the context modules see, until
// that context ends: the call then running is interrupted, its modules'
// context ends with the same cause, and the next call gets a live one.
// Calls under another context get their own, the last one canceled.
func TestModuleContextAcrossCalls(t *testing.T) {
	v := &vu{rt: goja.New(), interruptDone: make(chan struct{}, 1)}
	v.ctx = context.Background()
	var seen []context.Context
	record := func(goja.Value, ...goja.Value) (goja.Value, error) {
		seen = append(seen, v.ctx)
		return goja.Undefined(), v.ctx.Err()
	}
	scenario, stopScenario := context.WithCancelCause(context.Background())
	for range 3 {
		if _, err := v.interruptible(scenario, record); err != nil {
			t.Fatal(err)
		}
	}
	if seen[0] != seen[1] || seen[1] != seen[2] || v.ctx != context.Background() {
		t.Fatal("calls under one context saw different module contexts, or the VU kept one")
	}
	stopped := errors.New("scenario over")
	cut := func(goja.Value, ...goja.Value) (goja.Value, error) {
		stopScenario(stopped)
		<-v.ctx.Done()
		return goja.Undefined(), context.Cause(v.ctx)
	}
	if _, err := v.interruptible(scenario, cut); !errors.Is(err, stopped) {
		t.Fatalf("the modules' context ended with %v, want %v", err, stopped)
	}
	if _, err := v.interruptible(context.Background(), record); err != nil {
		t.Fatalf("the next call's modules saw an ended context: %v", err)
	}
	if seen[3] == seen[0] {
		t.Error("a call under another context reused the last module context")
	}
	last := seen[3]
	if _, err := v.interruptible(context.TODO(), record); err != nil {
		t.Fatal(err)
	}
	if last.Err() == nil {
		t.Error("the module context of the last context was left live once another took its place")
	}
}
