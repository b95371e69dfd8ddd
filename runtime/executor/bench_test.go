package executor

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkArrivalSchedule measures the cost of planning one start.
func BenchmarkArrivalSchedule(b *testing.B) {
	for _, tc := range []struct{ name, executor, js string }{
		{"constant", "constant-arrival-rate", `{"rate": 1000, "duration": "1000h", "preAllocatedVUs": 1}`},
		{"poisson", "constant-arrival-rate", `{"rate": 1000, "duration": "1000h", "preAllocatedVUs": 1, "arrival": "poisson"}`},
		{"gamma-0.5", "constant-arrival-rate", `{"rate": 1000, "duration": "1000h", "preAllocatedVUs": 1, "arrival": "gamma", "burstiness": 0.5}`},
		{"gamma-4", "constant-arrival-rate", `{"rate": 1000, "duration": "1000h", "preAllocatedVUs": 1, "arrival": "gamma", "burstiness": 4}`},
		{"ramping-poisson", "ramping-arrival-rate", `{"startRate": 10, "preAllocatedVUs": 1, "arrival": "poisson", "stages": [{"duration": "500h", "target": 2000}, {"duration": "500h", "target": 10}]}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := decode(b, tc.executor, tc.js)
			var s *Schedule
			switch c := cfg.(type) {
			case *ConstantArrivalRate:
				s = c.Schedule(1)
			case *RampingArrivalRate:
				s = c.Schedule(1)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := s.Next(); !ok {
					b.Fatal("schedule ended")
				}
			}
		})
	}
}

// BenchmarkPacing runs a constant-arrival-rate executor for one second with
// iterations that return at once and reports the client lag (actual start
// minus planned start) percentiles: the pacing accuracy of the scheduling
// loop, timers and goroutine start included.
func BenchmarkPacing(b *testing.B) {
	for _, tc := range []struct {
		rate    int
		arrival string
	}{{100, "constant"}, {1000, "constant"}, {5000, "constant"}, {1000, "poisson"}, {5000, "poisson"}} {
		b.Run(fmt.Sprintf("%s-%d", tc.arrival, tc.rate), func(b *testing.B) {
			cfg := decode(b, "constant-arrival-rate", fmt.Sprintf(`{"rate": %d, "duration": "1s", "preAllocatedVUs": 100, "arrival": %q}`, tc.rate, tc.arrival))
			f := &flight{}
			var lags []time.Duration
			var dropped int64
			for b.Loop() {
				pool := fixed(f.vus(100))
				if err := cfg.NewExecutor(1).Run(context.Background(), pool); err != nil {
					b.Fatal(err)
				}
				l, _ := pool.recorded()
				lags = append(lags, l...)
				dropped += pool.dropped.Load()
			}
			slices.Sort(lags)
			pct := func(p float64) float64 {
				return float64(lags[int(p*float64(len(lags)-1))]) / float64(time.Microsecond)
			}
			b.ReportMetric(pct(0.50), "lag-p50-µs")
			b.ReportMetric(pct(0.99), "lag-p99-µs")
			b.ReportMetric(float64(lags[len(lags)-1])/float64(time.Microsecond), "lag-max-µs")
			b.ReportMetric(float64(dropped), "dropped")
		})
	}
}
