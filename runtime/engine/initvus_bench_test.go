package engine

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/gctune"
)

// BenchmarkInitVUs initialises 10,000 VUs of bench/stream.js's script as
// a run does before its start (in parallel, one worker per CPU) and
// reports the wall time and the heap they hold: issue 14 asks for
// 10,000 VUs in at most 2 s on 2 CPUs. The collector is tuned as cmd/llmrun
// tunes it (unless GOGC is set).
func BenchmarkInitVUs(b *testing.B) {
	const n = 10000
	defer gctune.Start(os.Getenv).Stop()
	src, err := os.ReadFile("../../bench/stream.js")
	if err != nil {
		b.Fatal(err)
	}
	e := benchEngine(b, "http://127.0.0.1:1/v1", string(src)+"\nexport const options = { vus: 10000, iterations: 10000 };\n")
	var wall time.Duration
	var perVU float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		vus, err := e.initVUs(context.Background())
		wall = time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perVU = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(vus)
	}
	b.ReportMetric(wall.Seconds(), "s/10000VUs")
	b.ReportMetric(perVU/1024, "KiB/VU")
}
