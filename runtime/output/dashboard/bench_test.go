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
	const streams, scenarios = 1000, 4
	var progress engine.Progress
	tags := make([]*metrics.TagSet, scenarios)
	for i := range scenarios {
		name := "s" + strconv.Itoa(i)
		tags[i] = metrics.NewTagSet(map[string]string{"scenario": name})
		progress.Scenarios = append(progress.Scenarios, engine.ScenarioProgress{Name: name, Phase: engine.PhaseRunning, Duration: time.Hour})
	}
	records := make([]*llm.Record, streams)
	for i := range records {
		res := llm.Result{OK: i%50 != 0, Class: "timeout", TTFT: 50 + float64(i%400), TPOT: 8 + float64(i%30)/3, E2E: 900 + float64(i%700), PromptTokens: 500}
		for g := range 127 {
			res.ITL = append(res.ITL, 6+float64((i+g)%40)/4)
		}
		records[i] = new(llm.Record)
		res.Record(records[i], tags[i%scenarios], nil)
	}
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
// request that ended, added by VUs in parallel, over 4 scenarios.
func BenchmarkAddRequest(b *testing.B) {
	const scenarios = 4
	tags := make([]*metrics.TagSet, scenarios)
	for i := range scenarios {
		tags[i] = metrics.NewTagSet(map[string]string{"scenario": "s" + strconv.Itoa(i), "model": "m", "name": "chat"})
	}
	c := NewCollector(time.Now(), func() engine.Progress { return engine.Progress{} }, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.AddRequest(&llm.Record{Tags: tags[i%scenarios], OK: true, TTFT: 50 + float64(i%400), TPOT: 8, E2E: 900 + float64(i%700)})
			i++
		}
	})
}

// BenchmarkAddRequestDuringNext is AddRequest's cost while the
// dashboard's ticker makes one event after another (far more often than
// a run's period, to see whether the requests wait for it): with 1,000
// requests over 4 scenarios in each.
func BenchmarkAddRequestDuringNext(b *testing.B) {
	const scenarios = 4
	var progress engine.Progress
	tags := make([]*metrics.TagSet, scenarios)
	for i := range scenarios {
		name := "s" + strconv.Itoa(i)
		tags[i] = metrics.NewTagSet(map[string]string{"scenario": name})
		progress.Scenarios = append(progress.Scenarios, engine.ScenarioProgress{Name: name, Phase: engine.PhaseRunning, Duration: time.Hour})
	}
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
			c.AddRequest(&llm.Record{Tags: tags[i%scenarios], OK: true, TTFT: 50 + float64(i%400), TPOT: 8, E2E: 900 + float64(i%700)})
			i++
		}
	})
	b.StopTimer()
	close(stop)
	<-ticked
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
