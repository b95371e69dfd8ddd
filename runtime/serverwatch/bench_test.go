package serverwatch

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/promtest"
)

// BenchmarkWatch is the cost of the watch over a vLLM server and a DCGM
// exporter with two GPUs (the recorded expositions, 37 KiB and 13 KiB,
// served as they are from 127.0.0.1): each iteration reads both
// periodically ticks times, at an interval short enough to run fast,
// takes the end mark and computes the window's figures. It reports the
// process's CPU time (user and system; the in-process servers' share
// included, so an upper bound of the watch's) per tick, that is per read
// of both targets, and what that is of one core at one tick per second,
// the default interval. The cost does not grow with the run's load: the
// expositions are the same size whatever the number of streams.
func BenchmarkWatch(b *testing.B) {
	const ticks = 100
	var reads atomic.Int64
	enough := make(chan struct{}, 1)
	serve := func(file string) string {
		body, err := os.ReadFile(promtest.Recording(file))
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			w.Write(body)
			if reads.Add(1) == 2*ticks {
				enough <- struct{}{}
			}
		}))
		b.Cleanup(srv.Close)
		return srv.URL + "/metrics"
	}
	cfg := Config{Servers: []Server{{URL: serve("vllm.prom"), Preset: "vllm"}}, GPUs: []string{serve("dcgm.prom")}, Interval: 5 * time.Millisecond}
	ctx := b.Context()
	cpu := cpuTime(b)
	n := 0
	for b.Loop() {
		reads.Store(0)
		w, err := Start(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		w.Mark(ctx, MarkStart)
		<-enough
		w.Mark(ctx, MarkEnd)
		w.Stop()
		targets := w.Targets(Window{From: MarkStart, To: MarkEnd, Start: start, End: time.Now(), Origin: start})
		if len(targets[0].Figures) == 0 || len(targets[1].GPUs) != 2 {
			b.Fatalf("targets %+v", targets)
		}
		n++
	}
	perTick := (cpuTime(b) - cpu) / time.Duration(n*ticks)
	b.ReportMetric(float64(perTick.Nanoseconds()), "cpu-ns/tick")
	b.ReportMetric(100*perTick.Seconds(), "%core@1s")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
