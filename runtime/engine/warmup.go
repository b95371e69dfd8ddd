package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Warmup is a scenario's warmup: its first Iterations iterations, or those
// that start within its first Duration. They run as any other, so the
// server's caches, the connections and the VUs warm up, but their samples
// are kept out of every statistic, threshold and output; only the
// warmup_iterations and warmup_requests counts remain.
//
// In options it is a number of iterations (warmup: 20), a duration
// (warmup: '30s'), or an object ({ iterations: 20 } or { duration: '30s' }).
type Warmup struct {
	Iterations int
	Duration   time.Duration
}

// IsZero reports whether there is no warmup.
func (w Warmup) IsZero() bool { return w.Iterations == 0 && w.Duration == 0 }

// String describes the warmup for banners.
func (w Warmup) String() string {
	switch {
	case w.Iterations > 0:
		return "first " + textfmt.Count(w.Iterations, "iteration")
	case w.Duration > 0:
		return fmt.Sprintf("first %s", w.Duration)
	}
	return "none"
}

// UnmarshalJSON reads the forms above.
func (w *Warmup) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*w = Warmup{}
		return nil
	case len(b) > 0 && b[0] == '"':
		var d executor.Duration
		if err := d.UnmarshalJSON(b); err != nil {
			return err
		}
		*w = Warmup{Duration: d.D}
	case len(b) > 0 && b[0] == '{':
		var o struct {
			Iterations *int              `json:"iterations"`
			Duration   executor.Duration `json:"duration"`
		}
		if err := decodeStrict(b, &o); err != nil {
			return fmt.Errorf("warmup takes { iterations: N } or { duration: '30s' }: %s%w", fieldPrefix(err), jsonReason(err))
		}
		if o.Iterations != nil && o.Duration.Set {
			return errors.New("warmup takes iterations or a duration, not both")
		}
		*w = Warmup{Duration: o.Duration.D}
		if o.Iterations != nil {
			w.Iterations = *o.Iterations
		}
	default:
		var n float64
		if err := json.Unmarshal(b, &n); err != nil || n != float64(int(n)) {
			return fmt.Errorf("warmup must be a whole number of iterations, a duration like \"30s\", or an object; got %s", b)
		}
		*w = Warmup{Iterations: int(n)}
	}
	if w.Iterations < 0 || w.Duration < 0 {
		return errors.New("warmup must not be negative")
	}
	return nil
}

// warmupGate decides, for each iteration of a scenario as it starts,
// whether it is warmup, and remembers when the measured part began.
type warmupGate struct {
	w        Warmup
	start    time.Time
	claimed  atomic.Int64
	measured atomic.Int64 // UnixNano of the first measured iteration's start
	// onMeasured, when set, is called when the first measured iteration
	// starts (Config.MeasuredStart, once for all scenarios).
	onMeasured func()
}

func newWarmupGate(w Warmup) *warmupGate { return &warmupGate{w: w} }

// begin marks the scenario's start, before its first iteration.
func (g *warmupGate) begin(now time.Time) { g.start = now }

// claim reports whether an iteration starting now is warmup. It runs
// at the start of every iteration of every VU: once the warmup is over it
// only reads the shared counters, so that the VUs' cores do not take
// turns owning their cache line.
func (g *warmupGate) claim(now time.Time) bool {
	warm := false
	switch n := int64(g.w.Iterations); {
	case n > 0:
		warm = g.claimed.Load() < n && g.claimed.Add(1) <= n
	case g.w.Duration > 0:
		warm = now.Before(g.start.Add(g.w.Duration))
	}
	if !warm && g.measured.Load() == 0 && g.measured.CompareAndSwap(0, now.UnixNano()) && g.onMeasured != nil {
		g.onMeasured()
	}
	return warm
}

// warming says whether the scenario, begun, is still in its warmup at
// now: its warmup duration not over, or no measured iteration started
// after its warmup iterations.
func (g *warmupGate) warming(now time.Time) bool {
	switch {
	case g.w.Iterations > 0:
		return g.measured.Load() == 0
	case g.w.Duration > 0:
		return now.Before(g.start.Add(g.w.Duration))
	}
	return false
}

// measuredStart is when the scenario's measured part began: the end of a
// warmup duration, or the start of the first iteration after the warmup
// iterations; end when nothing was measured.
func (g *warmupGate) measuredStart(end time.Time) time.Time {
	if g.w.Iterations == 0 {
		if s := g.start.Add(g.w.Duration); s.Before(end) {
			return s
		}
		return end
	}
	if ns := g.measured.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return end
}

// warmupSink stands in for a VU's sink during a warmup iteration: it drops
// every sample but counts the LLM requests as warmup_requests.
type warmupSink struct {
	real     metrics.Sink
	requests *metrics.Metric // llm_requests, the metric counted
	warmup   *metrics.Metric // warmup_requests, where it is counted
}

func (s warmupSink) AddSamples(samples []metrics.Sample) {
	for _, smp := range samples {
		if smp.Metric == s.requests {
			s.real.AddSamples([]metrics.Sample{{Metric: s.warmup, Tags: smp.Tags, Time: smp.Time, Value: smp.Value}})
		}
	}
}
