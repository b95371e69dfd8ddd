package dashboard

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
)

// BenchmarkPeriod is the dashboard's cost of one period of a run of
// 1,000 streams at about 1 request/s each, over 4 scenarios: the
// period's 1,000 requests (answers of 128 tokens, their 127 gaps each in
// ITL) added, then the event made, encoded and
// published to one page. At a period of 1 s, ns/op over 1e7 is the
// percentage of one core; %core@1s is that of the process's CPU time
// (all its threads, the garbage collector's too), which other processes'
// load on the machine does not inflate as it does ns/op.
func BenchmarkPeriod(b *testing.B) {
	records, progress := streamedRecords(1000, 4)
	h := newHub()
	page, _ := h.join(func(time.Time) {})
	start := time.Now()
	c := NewCollector(start, func() engine.Progress { return progress }, nil)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU(b)
	for i := range b.N {
		for _, r := range records {
			c.AddRequest(r)
		}
		out, err := encodeEvent(c.Next(start.Add(time.Duration(i+1) * time.Second)))
		if err != nil {
			b.Fatal(err)
		}
		h.publish(out)
		<-page.events
	}
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N)/1e7, "%core@1s")
}

// BenchmarkAddRequest is the dashboard's cost on the hot path: one
// request of 128 tokens that ended, its 127 gaps counted for ITL, added
// by VUs in parallel, over 4 scenarios.
func BenchmarkAddRequest(b *testing.B) {
	records, _ := streamedRecords(1000, 4)
	c := NewCollector(time.Now(), func() engine.Progress { return engine.Progress{} }, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.AddRequest(records[i%len(records)])
			i++
		}
	})
}

// BenchmarkAddRequestDuringNext is AddRequest's cost while the
// dashboard's ticker makes one event after another (far more often than
// a run's period, to see whether the requests wait for it), each request
// one of 128 tokens over 4 scenarios.
func BenchmarkAddRequestDuringNext(b *testing.B) {
	records, progress := streamedRecords(1000, 4)
	start := time.Now()
	c := NewCollector(start, func() engine.Progress { return progress }, nil)
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
				c.Next(start.Add(time.Duration(i) * time.Second))
			}
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.AddRequest(records[i%len(records)])
			i++
		}
	})
	b.StopTimer()
	close(stop)
	<-ticked
}

// streamedRecords are n requests of 128 tokens (127 gaps each in ITL)
// spread over the given number of scenarios, one in 50 failed, and the
// progress of those scenarios running.
func streamedRecords(n, scenarios int) ([]*llm.Record, engine.Progress) {
	var progress engine.Progress
	tags := make([]*metrics.TagSet, scenarios)
	for i := range scenarios {
		name := "s" + strconv.Itoa(i)
		tags[i] = metrics.NewTagSet(map[string]string{"scenario": name})
		progress.Scenarios = append(progress.Scenarios, engine.ScenarioProgress{Name: name, Phase: engine.PhaseRunning, Duration: time.Hour})
	}
	records := make([]*llm.Record, n)
	for i := range records {
		res := llm.Result{OK: i%50 != 0, Class: "timeout", TTFT: 50 + float64(i%400), TPOT: 8 + float64(i%30)/3, E2E: 900 + float64(i%700), PromptTokens: 500}
		for g := range 127 {
			res.ITL = append(res.ITL, 6+float64((i+g)%40)/4)
		}
		records[i] = new(llm.Record)
		res.Record(records[i], tags[i%scenarios], nil)
	}
	return records, progress
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
