package servermetrics

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkScrape is the cost of one scrape of the recorded vLLM
// exposition (369 lines, 37 KiB) from a server on 127.0.0.1: the request,
// reading the body and parsing it. It reports the process's CPU time per
// scrape (user and system, the in-process server's share included, so an
// upper bound of the client's) and what that is of one core at one
// scrape per second; and the heap one snapshot keeps, whole and as a
// series' point keeps it by default (its counters and gauges).
func BenchmarkScrape(b *testing.B) {
	body := vllmText(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(body)
	}))
	defer srv.Close()
	url := srv.URL + "/metrics"
	ctx := b.Context()
	if _, err := Scrape(ctx, nil, url, 0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Scrape(ctx, nil, url, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perScrape := (cpuTime(b) - cpu) / time.Duration(b.N)
	b.ReportMetric(float64(perScrape.Nanoseconds()), "cpu-ns/scrape")
	b.ReportMetric(100*perScrape.Seconds(), "%core@1s")
	b.ReportMetric(float64(keptBytes(b, url, func(s Snapshot) Snapshot { return s })), "B-kept/snapshot")
	var shared interner
	b.ReportMetric(float64(keptBytes(b, url, func(s Snapshot) Snapshot { return shared.point(s, nil) })), "B-kept/point")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// keptBytes is the heap one snapshot of url holds once kept (what keep
// returns of it), measured over 50.
func keptBytes(b *testing.B, url string, keep func(Snapshot) Snapshot) uint64 {
	const n = 50
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]Snapshot, n)
	for i := range kept {
		snap, err := Scrape(b.Context(), nil, url, 0)
		if err != nil {
			b.Fatal(err)
		}
		kept[i] = keep(snap)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return (after.HeapAlloc - before.HeapAlloc) / n
}
