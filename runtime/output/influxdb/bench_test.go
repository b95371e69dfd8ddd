package influxdb

import (
	"context"
	"testing"

	"github.com/llmrun/llmrun/internal/influxtest"
)

// BenchmarkAddRequest measures AddRequest from many goroutines with the
// writer running against a real server: with llm_request points (the
// record is queued, and dropped when the writer falls behind: see
// dropped/op), and with aggregates only.
func BenchmarkAddRequest(b *testing.B) {
	s := influxtest.Start(b)
	for _, requests := range []bool{true, false} {
		name := "aggregates"
		if requests {
			name = "requests"
		}
		b.Run(name, func(b *testing.B) {
			cfg := testConfig(s)
			cfg.Requests, cfg.Buffer, cfg.Batch = requests, DefaultBuffer, DefaultBatch
			run := testRun(b)
			o := startOutput(b, cfg, run)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := *okRecord("chat", run.Start)
				for pb.Next() {
					o.AddRequest(&r)
				}
			})
			b.StopTimer()
			rep := o.Finish(context.Background(), nil)
			b.ReportMetric(float64(rep.Dropped)/float64(b.N), "dropped/op")
		})
	}
}
