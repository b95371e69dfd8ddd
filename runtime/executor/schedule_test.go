package executor

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"testing"
	"time"
)

// schedule decodes an arrival-rate configuration and returns its planned
// starts for seed.
func schedule(t testing.TB, name, js string, seed uint64) []time.Duration {
	t.Helper()
	cfg := decode(t, name, js)
	var s *Schedule
	switch c := cfg.(type) {
	case *ConstantArrivalRate:
		s = c.Schedule(seed)
	case *RampingArrivalRate:
		s = c.Schedule(seed)
	default:
		t.Fatalf("%s has no schedule", name)
	}
	var out []time.Duration
	for off, ok := s.Next(); ok; off, ok = s.Next() {
		out = append(out, off)
	}
	return out
}

func TestConstantScheduleIsEvenlySpacedFromZero(t *testing.T) {
	got := schedule(t, "constant-arrival-rate", `{"rate": 50, "duration": "2s", "preAllocatedVUs": 1}`, 1)
	if len(got) != 100 {
		t.Fatalf("%d planned starts, want rate × duration = 100", len(got))
	}
	for i, off := range got {
		if want := time.Duration(i) * 20 * time.Millisecond; off != want {
			t.Fatalf("start %d planned at %v, want %v", i, off, want)
		}
	}
	// timeUnit: 90 per minute is 1.5/s, every 666.67 ms.
	got = schedule(t, "constant-arrival-rate", `{"rate": 90, "timeUnit": "1m", "duration": "10s", "preAllocatedVUs": 1}`, 1)
	if len(got) != 15 || got[3] != 2*time.Second {
		t.Fatalf("90/min for 10s: %v, want 15 starts, the 4th at 2s", got)
	}
}

// The planned starts are computed on an absolute timeline: the millionth
// start of a 3/s schedule is where it belongs to the nanosecond, where
// adding up rounded 333.333333 ms periods would be 333 µs early.
func TestScheduleDoesNotDrift(t *testing.T) {
	const n = 1_000_000
	cfg := decode(t, "constant-arrival-rate", `{"rate": 3, "duration": "400000s", "preAllocatedVUs": 1}`).(*ConstantArrivalRate)
	s := cfg.Schedule(1)
	for i := int64(0); i < n; i++ {
		off, ok := s.Next()
		if !ok {
			t.Fatalf("schedule ended after %d starts", i)
		}
		want := time.Duration(i * int64(time.Second) / 3) // exact, truncated
		if d := off - want; d < -1 || d > 1 {
			t.Fatalf("start %d planned at %d ns, want %d ns (±1)", i, off, want)
		}
	}
	// A Poisson schedule's count over a long run stays at the mean rate.
	got := len(schedule(t, "constant-arrival-rate", `{"rate": 1000, "duration": "100s", "preAllocatedVUs": 1, "arrival": "poisson"}`, 7))
	if got < 99_000 || got > 101_000 { // ±3 standard deviations
		t.Errorf("Poisson at 1000/s for 100s planned %d starts, want 100000 ± 1000", got)
	}
}

// ramping-arrival-rate starts iteration i when the integral of the rate
// reaches i (k6's timeline): from 0 to 1/s over 5s, 1/s for 1s, down to 0
// over 5s.
func TestRampingScheduleFollowsTheRate(t *testing.T) {
	got := schedule(t, "ramping-arrival-rate", `{"startRate": 0, "preAllocatedVUs": 1, "stages": [
		{"duration": "5s", "target": 1}, {"duration": "1s", "target": 1}, {"duration": "5s", "target": 0}]}`, 1)
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	want := []time.Duration{sec(math.Sqrt(10)), sec(math.Sqrt(20)), sec(5.5), sec(11 - math.Sqrt(20)), sec(11 - math.Sqrt(10)), 11 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("planned %v, want %v", got, want)
	}
	for i := range want {
		if d := got[i] - want[i]; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("start %d planned at %v, want %v", i, got[i], want[i])
		}
	}
	// The count is the area under the rate: (0+20)/2·10 + 20·5 + (20+5)/2·4 = 250.
	got = schedule(t, "ramping-arrival-rate", `{"startRate": 0, "preAllocatedVUs": 1, "stages": [
		{"duration": "10s", "target": 20}, {"duration": "5s", "target": 20}, {"duration": "4s", "target": 5}, {"duration": "0s", "target": 100}]}`, 1)
	if len(got) != 250 {
		t.Errorf("planned %d starts, want the area under the rate, 250", len(got))
	}
	if !slices.IsSorted(got) {
		t.Error("planned starts are not in order")
	}
}

// ksExponential is the Kolmogorov–Smirnov statistic of xs against the
// exponential distribution of rate lambda.
func ksExponential(xs []float64, lambda float64) float64 {
	xs = slices.Clone(xs)
	sort.Float64s(xs)
	n := float64(len(xs))
	var d float64
	for i, x := range xs {
		f := 1 - math.Exp(-lambda*x)
		d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n))
	}
	return d
}

func gaps(offs []time.Duration) []float64 {
	out := make([]float64, len(offs)-1)
	for i := range out {
		out[i] = (offs[i+1] - offs[i]).Seconds()
	}
	return out
}

func TestPoissonGapsAreExponential(t *testing.T) {
	offs := schedule(t, "constant-arrival-rate", `{"rate": 100, "duration": "200s", "preAllocatedVUs": 1, "arrival": "poisson"}`, 42)
	g := gaps(offs)
	// Critical value of the KS test at α = 0.01: 1.628/√n.
	crit := 1.628 / math.Sqrt(float64(len(g)))
	if d := ksExponential(g, 100); d > crit {
		t.Errorf("KS statistic of %d gaps against Exp(100/s) = %.4f, above the 1%% critical value %.4f", len(g), d, crit)
	}
	// The test has power: constant gaps fail it.
	even := gaps(schedule(t, "constant-arrival-rate", `{"rate": 100, "duration": "200s", "preAllocatedVUs": 1}`, 42))
	if d := ksExponential(even, 100); d < crit {
		t.Errorf("KS statistic of evenly spaced gaps = %.4f, below %.4f: the test cannot tell", d, crit)
	}
	// With a ramping rate, the gaps measured in expected arrivals,
	// Λ(t_{i+1}) − Λ(t_i), are Exp(1) (time rescaling).
	cfg := decode(t, "ramping-arrival-rate", `{"startRate": 10, "preAllocatedVUs": 1, "arrival": "poisson", "stages": [
		{"duration": "60s", "target": 200}, {"duration": "30s", "target": 200}, {"duration": "60s", "target": 20}]}`).(*RampingArrivalRate)
	cv := newCurve(cfg.StartRate, cfg.Stages, cfg.unit())
	s := cfg.Schedule(42)
	var prev float64
	var rescaled []float64
	for off, ok := s.Next(); ok; off, ok = s.Next() {
		l := cv.cumulative(off)
		rescaled = append(rescaled, l-prev)
		prev = l
	}
	crit = 1.628 / math.Sqrt(float64(len(rescaled)))
	if d := ksExponential(rescaled, 1); d > crit {
		t.Errorf("KS statistic of %d rescaled ramping gaps against Exp(1) = %.4f, above %.4f", len(rescaled), d, crit)
	}
	if want := cv.total; math.Abs(float64(len(rescaled))-want) > 3*math.Sqrt(want) {
		t.Errorf("ramping Poisson planned %d starts, want about %.0f", len(rescaled), want)
	}
}

func TestGammaGapsHaveTheRateAndBurstiness(t *testing.T) {
	for _, k := range []float64{0.25, 1, 4} {
		js, _ := json.Marshal(map[string]any{"rate": 50, "duration": "2000s", "preAllocatedVUs": 1, "arrival": "gamma", "burstiness": k})
		g := gaps(schedule(t, "constant-arrival-rate", string(js), 3))
		var sum, sq float64
		for _, x := range g {
			sum += x
		}
		mean := sum / float64(len(g))
		for _, x := range g {
			sq += (x - mean) * (x - mean)
		}
		cv := math.Sqrt(sq/float64(len(g)-1)) / mean
		if math.Abs(mean-1.0/50)/(1.0/50) > 0.02 {
			t.Errorf("burstiness %v: mean gap %.5f s, want 1/rate = 0.02 s (±2%%)", k, mean)
		}
		if want := 1 / math.Sqrt(k); math.Abs(cv-want)/want > 0.05 {
			t.Errorf("burstiness %v: coefficient of variation %.3f, want 1/√k = %.3f (±5%%)", k, cv, want)
		}
	}
}

func TestScheduleIsDeterministicUnderTheSeed(t *testing.T) {
	for _, arrival := range []string{`"poisson"`, `"gamma", "burstiness": 0.5`} {
		js := `{"rate": 20, "duration": "30s", "preAllocatedVUs": 1, "arrival": ` + arrival + `}`
		a := schedule(t, "constant-arrival-rate", js, SeedFor(1, "chat"))
		b := schedule(t, "constant-arrival-rate", js, SeedFor(1, "chat"))
		if !slices.Equal(a, b) {
			t.Errorf("%s: two schedules of the same seed differ", arrival)
		}
		for _, other := range []uint64{SeedFor(2, "chat"), SeedFor(1, "rag")} {
			if slices.Equal(a, schedule(t, "constant-arrival-rate", js, other)) {
				t.Errorf("%s: a different seed or scenario gives the same schedule", arrival)
			}
		}
	}
}

func TestGammaRandMoments(t *testing.T) {
	// Gamma(k, 1) has mean k and variance k, also for shapes below 1.
	for _, k := range []float64{0.1, 0.5, 2.5, 30} {
		r := newRand(11)
		const n = 200_000
		var sum, sq float64
		for range n {
			x := gammaRand(r, k)
			sum += x
			sq += x * x
		}
		mean := sum / n
		variance := sq/n - mean*mean
		if math.Abs(mean-k)/k > 0.02 || math.Abs(variance-k)/k > 0.06 {
			t.Errorf("Gamma(%v): mean %.4f variance %.4f, want both %v", k, mean, variance, k)
		}
	}
}

// newTestSchedule decodes an arrival-rate configuration and returns its
// schedule for seed.
func newTestSchedule(t *testing.T, name, js string, seed uint64) *Schedule {
	t.Helper()
	switch c := decode(t, name, js).(type) {
	case *ConstantArrivalRate:
		return c.Schedule(seed)
	case *RampingArrivalRate:
		return c.Schedule(seed)
	}
	t.Fatalf("%s has no schedule", name)
	return nil
}

// SkipTo and Drain count the planned starts they skip as Next would have
// returned them: the same starts, counted without drawing them for
// constant arrivals.
func TestSkipToAndDrainCountWhatNextWouldReturn(t *testing.T) {
	tests := []struct{ name, js string }{
		{"constant-arrival-rate", `{"rate": 10, "duration": "1s", "preAllocatedVUs": 1}`},
		{"ramping-arrival-rate", `{"startRate": 0, "stages": [{"duration": "1s", "target": 20}], "preAllocatedVUs": 1}`},
		{"constant-arrival-rate", `{"rate": 10, "duration": "1s", "preAllocatedVUs": 1, "arrival": "poisson"}`},
		{"ramping-arrival-rate", `{"startRate": 5, "stages": [{"duration": "1s", "target": 20}], "preAllocatedVUs": 1, "arrival": "gamma", "burstiness": 0.5}`},
	}
	for _, tc := range tests {
		all := schedule(t, tc.name, tc.js, 7)
		for _, at := range []time.Duration{0, 250 * time.Millisecond, 550 * time.Millisecond, time.Second} {
			s := newTestSchedule(t, tc.name, tc.js, 7)
			first, _ := s.Next()
			skipped := s.SkipTo(at)
			next, ok := s.Next()
			rest := 0
			if ok {
				rest = 1 + s.Drain()
			}
			before := 0
			for _, st := range all {
				if st > first && st <= at {
					before++
				}
			}
			if skipped != before || 1+skipped+rest != len(all) {
				t.Errorf("%s: SkipTo(%v) after the first start skipped %d (want %d), then %d left: %d in all, want %d",
					tc.js, at, skipped, before, rest, 1+skipped+rest, len(all))
			}
			if ok && next <= at {
				t.Errorf("%s: after SkipTo(%v), Next returned %v", tc.js, at, next)
			}
			if _, ok := s.Next(); ok {
				t.Errorf("%s: Next returned a start after Drain", tc.js)
			}
		}
	}
}

// A rate no loop could draw one start at a time is drained at once.
func TestDrainDoesNotDrawEveryStart(t *testing.T) {
	s := newTestSchedule(t, "constant-arrival-rate", `{"rate": 1000000, "duration": "8760h", "preAllocatedVUs": 1}`, 1)
	if _, ok := s.Next(); !ok {
		t.Fatal("no first start")
	}
	if n, want := s.Drain(), 1_000_000*8760*3600-1; n != want {
		t.Errorf("Drain = %d, want %d", n, want)
	}
}
