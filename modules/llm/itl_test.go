package llm

import (
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/modules/metrics"
)

// TestRequestEndStack checks that the work at the end of a request, its
// samples and its record, runs on a small stack: a VU's goroutine keeps
// the stack it grew to until a collection shrinks it, and waits on it for
// its next stream. Ranging over the buckets of a folded ITL by value once
// put a 17 KiB copy of them in the frames of AppendSamples and itlP99,
// which grew the stack of every VU to 32 KiB at the end of every request,
// folded or not.
func TestRequestEndStack(t *testing.T) {
	const goroutines = 100
	res := &Result{OK: true, Stream: true, TTFT: 1, E2E: 3, ITL: []float64{1, 1}, Chunks: 3, OutputTokens: 3}
	m := RegisterMetrics(metrics.NewRegistry())
	runtime.GC()                                     // frees the stacks of ended goroutines
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection would shrink the stacks
	before := stackBytes()
	release := make(chan struct{})
	var ready, done sync.WaitGroup
	ready.Add(goroutines)
	for range goroutines {
		done.Go(func() {
			var rec Record
			samples := m.AppendSamples(nil, nil, res)
			res.Record(&rec, nil, nil)
			runtime.KeepAlive(samples)
			ready.Done()
			<-release
		})
	}
	ready.Wait()
	grown := stackBytes() - before
	close(release)
	done.Wait()
	if each := grown / goroutines; each > 16<<10 {
		t.Errorf("a goroutine that ended a request holds %d KiB of stack, want at most 16 KiB", each>>10)
	}
}

// stackBytes returns the bytes of goroutine stacks.
func stackBytes() int64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/stacks:bytes"}}
	rtmetrics.Read(s)
	return int64(s[0].Value.Uint64())
}
