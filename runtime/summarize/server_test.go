package summarize_test

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// AttachServer keeps what the targets gave as the file keeps it, and
// derives the figures that compare them with the client's.
func TestAttachServer(t *testing.T) {
	t.Run("the prefix-cache hit rate as the server counts it", func(t *testing.T) {
		for _, tt := range []struct {
			name  string
			edit  func(f map[string]summary.WindowFigure)
			want  *float64
			fixed bool
		}{
			{"hits over queries", func(f map[string]summary.WindowFigure) {}, summarytest.Num(0.25), true},
			{"the rate the engine exposes when it has no counts", func(f map[string]summary.WindowFigure) {
				delete(f, string(engines.PrefixCacheHits))
				delete(f, string(engines.PrefixCacheQueries))
				f[string(engines.PrefixCacheHitRate)] = summarytest.Gauge("fraction", 0.6, 0.9)
			}, summarytest.Num(0.6), true},
			{"none when no token was looked up", func(f map[string]summary.WindowFigure) {
				f[string(engines.PrefixCacheQueries)] = summarytest.Counter("tokens", 0)
				f[string(engines.PrefixCacheHits)] = summarytest.Counter("tokens", 0)
			}, nil, true},
			{"none when the server exposes neither", func(f map[string]summary.WindowFigure) {
				delete(f, string(engines.PrefixCacheHits))
			}, nil, true},
		} {
			s := summarytest.Attached(func(_ *summary.Summary, ts []summary.ServerTarget) { tt.edit(ts[0].Figures) })
			if got := s.Server.Targets[0].PrefixCacheHitRate; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, deref(got), deref(tt.want))
			}
		}
	})
	t.Run("energy per output token of the run", func(t *testing.T) {
		s := summarytest.Attached(nil)
		e := s.Server.Energy
		if e == nil || e.Joules != 1000 || e.Method != "counter" || e.OutputTokens != 5000 || *e.JoulesPerOutputToken != 0.2 || *e.OutputTokensPerJoule != 5 {
			t.Fatalf("energy %+v, want 1000 J by counter for 5000 tokens: 0.2 J/token, 5 tokens/J", e)
		}
		s = summarytest.Attached(func(_ *summary.Summary, ts []summary.ServerTarget) {
			other := summarytest.DCGMTarget()
			other.URL, other.Energy = "nvidia-smi", &summary.Energy{Joules: 250, Method: summary.EnergyIntegrated}
			ts[0] = other
		})
		if e := s.Server.Energy; e.Joules != 1250 || e.Method != "integrated power, counter" || *e.JoulesPerOutputToken != 0.25 {
			t.Errorf("energy of two targets %+v, want 1250 J, both methods, 0.25 J/token", e)
		}
		s = summarytest.Attached(func(s *summary.Summary, _ []summary.ServerTarget) { s.Serving.OutputTokens = 0 })
		if e := s.Server.Energy; e.JoulesPerOutputToken != nil || e.OutputTokensPerJoule != nil {
			t.Errorf("energy without output tokens %+v: want no per-token figures", e)
		}
		s = summarytest.Attached(func(_ *summary.Summary, ts []summary.ServerTarget) { ts[1].Energy = nil })
		if s.Server.Energy != nil {
			t.Errorf("energy %+v when no target measured it, want none", s.Server.Energy)
		}
	})
	t.Run("credentials redacted", func(t *testing.T) {
		s := summarytest.Attached(func(_ *summary.Summary, ts []summary.ServerTarget) {
			ts[0].URL = "http://user:secret@gpu-1:8000/metrics?token=abc"
		})
		if got := s.Server.Targets[0].URL; strings.Contains(got, "secret") || strings.Contains(got, "abc") || !strings.Contains(got, "gpu-1:8000/metrics") {
			t.Errorf("URL %q keeps a credential", got)
		}
	})
	t.Run("values that are no number are absent, never written", func(t *testing.T) {
		s := summarytest.Attached(func(_ *summary.Summary, ts []summary.ServerTarget) {
			ts[0].Figures[string(engines.QueueTime)] = summary.WindowFigure{Kind: "histogram", Unit: "seconds", P50: summarytest.Num(math.NaN()), P99: summarytest.Num(math.Inf(1)), Count: summarytest.Num(0), Sum: summarytest.Num(0)}
			ts[0].Series = []summary.ServerPoint{{T: 1, Running: summarytest.Num(math.NaN()), Waiting: summarytest.Num(2)}}
			ts[1].Energy.Joules = math.NaN()
		})
		q := s.Server.Targets[0].Figures[string(engines.QueueTime)]
		if q.P50 != nil || q.P99 != nil || q.Count == nil || *q.Count != 0 {
			t.Errorf("queue time %+v: want no quantiles, a count of 0", q)
		}
		if p := s.Server.Targets[0].Series[0]; p.Running != nil || *p.Waiting != 2 {
			t.Errorf("series point %+v: want no running, waiting 2", p)
		}
		if s.Server.Targets[1].Energy != nil || s.Server.Energy != nil {
			t.Errorf("energy of NaN joules kept: %+v", s.Server.Targets[1].Energy)
		}
		if _, err := summary.ReadJSON(summarytest.WriteResult(t, s)); err != nil {
			t.Error(err)
		}
	})
	t.Run("the series is bounded", func(t *testing.T) {
		n := 3*summary.MaxServerPoints + 1
		s := summarytest.Attached(func(_ *summary.Summary, ts []summary.ServerTarget) {
			ts[0].Series = make([]summary.ServerPoint, n)
			for i := range ts[0].Series {
				ts[0].Series[i] = summary.ServerPoint{T: float64(i + 1), Running: summarytest.Num(float64(i))}
				if i%2 == 0 {
					ts[0].Series[i].Waiting = summarytest.Num(10)
				}
			}
		})
		got := s.Server.Targets[0].Series
		if len(got) > summary.MaxServerPoints {
			t.Fatalf("%d points, want at most %d", len(got), summary.MaxServerPoints)
		}
		// Runs of 4 points: the first is points 0..3, at the time of the
		// last; the last holds the one point left.
		first, last := got[0], got[len(got)-1]
		if first.T != 4 || *first.Running != 1.5 || *first.Waiting != 10 || first.KVCacheUsage != nil {
			t.Errorf("first point %+v, want t 4, running 1.5 (mean of 0..3), waiting 10, no KV cache", first)
		}
		if last.T != float64(n) || *last.Running != float64(n-1) {
			t.Errorf("last point t %v running %v, want t %d running %d", last.T, deref(last.Running), n, n-1)
		}
	})
	t.Run("a histogram's buckets are bounded, its last bound kept", func(t *testing.T) {
		const n = 2*summary.MaxServerBuckets + 50
		s := summarytest.Attached(func(_ *summary.Summary, ts []summary.ServerTarget) {
			f := summary.WindowFigure{Kind: "histogram", Unit: "seconds", Count: summarytest.Num(n), Sum: summarytest.Num(n)}
			for i := range n {
				f.Buckets = append(f.Buckets, summary.HistogramBucket{Le: float64(i + 1), Count: float64(i + 1)})
			}
			f.Buckets = append(f.Buckets, summary.HistogramBucket{Le: math.Inf(1), Count: n})
			ts[0].Figures[string(engines.E2E)] = f
		})
		got := s.Server.Targets[0].Figures[string(engines.E2E)].Buckets
		if len(got) > summary.MaxServerBuckets || got[len(got)-1].Le != n || got[0].Le != 3 {
			t.Fatalf("%d buckets from %v to %v, want at most %d, every third bound from 3 and the last, %d", len(got), got[0], got[len(got)-1], summary.MaxServerBuckets, n)
		}
		if _, err := summary.ReadJSON(summarytest.WriteResult(t, s)); err != nil {
			t.Error(err)
		}
	})
	t.Run("no target, no section", func(t *testing.T) {
		s := summarytest.ClientRun()
		summarize.AttachServer(s, nil)
		var buf bytes.Buffer
		if err := s.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if s.Server != nil || strings.Contains(buf.String(), `"server"`) {
			t.Errorf("a run without targets has a server section: %+v", s.Server)
		}
	})
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
