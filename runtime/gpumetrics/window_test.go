package gpumetrics

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)

func at(seconds float64) time.Time {
	return t0.Add(time.Duration(seconds * float64(time.Second)))
}

// The constructed power curve of the energy tests, in watts, and its exact
// integral from 0, in joules: P(t) = 200 + 3t + 0.05t².
func powerAt(t float64) float64  { return 200 + 3*t + 0.05*t*t }
func energyTo(t float64) float64 { return 200*t + 1.5*t*t + 0.05*t*t*t/3 }

// trapezoidError is the trapezoid rule's exact error for that curve over
// [a, b] in steps of h: (b-a)·h²·P”/12, P” being 0.1 W/s².
func trapezoidError(a, b, h float64) float64 { return (b - a) * h * h * 0.1 / 12 }

// powerSeries is one GPU's readings every second from 0 to 120 s, with power
// and a counter that starts at startJ; edit changes each sample.
func powerSeries(gpu GPU, startJ float64, edit func(i int, s *GPUSample)) []Reading {
	var readings []Reading
	for i := 0; i <= 120; i++ {
		t := float64(i)
		s := GPUSample{GPU: gpu, PowerW: ptr(powerAt(t)), EnergyJ: ptr(startJ + energyTo(t))}
		if edit != nil {
			edit(i, &s)
		}
		readings = append(readings, Reading{At: at(t), GPUs: []GPUSample{s}})
	}
	return readings
}

var gpuA = GPU{UUID: "GPU-a", Index: "0"}

func TestSummarizeEnergy(t *testing.T) {
	exact := energyTo(120) - energyTo(0)
	tests := []struct {
		name      string
		readings  []Reading
		want      float64
		tolerance float64
		method    Method
		resets    int
	}{
		{
			name:      "the counter's delta is exact",
			readings:  powerSeries(gpuA, 5e6, nil),
			want:      exact,
			tolerance: 1e-6,
			method:    MethodCounter,
		},
		{
			name: "a reading without the counter: power integrated, off by the trapezoid rule's error",
			readings: powerSeries(gpuA, 5e6, func(i int, s *GPUSample) {
				if i == 60 {
					s.EnergyJ = nil
				}
			}),
			want:      exact + trapezoidError(0, 120, 1),
			tolerance: 1e-6,
			method:    MethodIntegral,
		},
		{
			name: "the counter resets: the reset's step is its power integrated",
			readings: powerSeries(gpuA, 5e6, func(i int, s *GPUSample) {
				if i >= 60 {
					*s.EnergyJ -= 5e6 + energyTo(59.5)
				}
			}),
			want:      exact + trapezoidError(59, 60, 1),
			tolerance: 1e-6,
			method:    MethodCounter,
			resets:    1,
		},
		{
			name: "the counter wraps (at 2^63 mJ, DCGM's int64): the wrap's step is its power integrated",
			readings: powerSeries(gpuA, math.Exp2(63)/1000-energyTo(30.2), func(i int, s *GPUSample) {
				if i > 30 {
					*s.EnergyJ -= math.Exp2(63) / 1000
				}
			}),
			want:      exact + trapezoidError(30, 31, 1),
			tolerance: 2, // a float64 near 9.2e15 J is exact to 1 J: the readings before the wrap are rounded
			method:    MethodCounter,
			resets:    1,
		},
		{
			name: "the counter resets where power is unknown: it counted from zero (Prometheus' rule)",
			readings: powerSeries(gpuA, 5e6, func(i int, s *GPUSample) {
				if i >= 60 {
					*s.EnergyJ -= 5e6 + energyTo(59.5)
				}
				if i == 60 {
					s.PowerW = nil
				}
			}),
			want:      exact - (energyTo(60) - energyTo(59)) + (energyTo(60) - energyTo(59.5)),
			tolerance: 1e-6,
			method:    MethodCounter,
			resets:    1,
		},
		{
			name: "no counter and a gap in power: the gap is bridged by the trapezoid",
			readings: powerSeries(gpuA, 0, func(i int, s *GPUSample) {
				s.EnergyJ = nil
				if i%2 == 1 {
					s.PowerW = nil
				}
			}),
			want:      exact + trapezoidError(0, 120, 2),
			tolerance: 1e-6,
			method:    MethodIntegral,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Summarize(tt.readings, at(0), at(120), 1000)
			if len(f.GPUs) != 1 {
				t.Fatalf("%d GPUs, want 1", len(f.GPUs))
			}
			e := f.GPUs[0].Energy
			if e.Joules == nil {
				t.Fatalf("no energy, want %v J", tt.want)
			}
			if math.Abs(*e.Joules-tt.want) > tt.tolerance {
				t.Errorf("energy %.6f J, want %.6f J (±%g)", *e.Joules, tt.want, tt.tolerance)
			}
			if e.Method != tt.method || e.Resets != tt.resets {
				t.Errorf("method %q with %d resets, want %q with %d", e.Method, e.Resets, tt.method, tt.resets)
			}
			if f.All.Energy.Joules == nil || *f.All.Energy.Joules != *e.Joules || f.All.Energy.Method != tt.method {
				t.Errorf("all GPUs' energy %+v, want the one GPU's %+v", f.All.Energy, e)
			}
			// The mean power times the span is the energy the integral finds.
			if mean := *f.GPUs[0].PowerW.Mean * 120; tt.method == MethodIntegral && math.Abs(mean-*e.Joules) > 1e-6 {
				t.Errorf("mean power × span = %.6f J, energy %.6f J", mean, *e.Joules)
			}
		})
	}
}

func TestSummarizeCounterAgreesWithIntegral(t *testing.T) {
	withCounter := Summarize(powerSeries(gpuA, 0, nil), at(0), at(120), 0)
	withoutCounter := Summarize(powerSeries(gpuA, 0, func(_ int, s *GPUSample) { s.EnergyJ = nil }), at(0), at(120), 0)
	counter, integral := *withCounter.All.Energy.Joules, *withoutCounter.All.Energy.Joules
	if withCounter.All.Energy.Method != MethodCounter || withoutCounter.All.Energy.Method != MethodIntegral {
		t.Fatalf("methods %q and %q", withCounter.All.Energy.Method, withoutCounter.All.Energy.Method)
	}
	if diff := integral - counter; math.Abs(diff-trapezoidError(0, 120, 1)) > 1e-6 {
		t.Errorf("integral − counter = %.6f J, want the trapezoid rule's error %.6f J", diff, trapezoidError(0, 120, 1))
	}
}

func TestSummarizeEnergyUnknown(t *testing.T) {
	tests := []struct {
		name     string
		readings []Reading
	}{
		{"one reading", powerSeries(gpuA, 0, nil)[:1]},
		{"no power, no counter", powerSeries(gpuA, 0, func(_ int, s *GPUSample) { s.PowerW, s.EnergyJ = nil, nil })},
		{"no readings", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Summarize(tt.readings, at(0), at(120), 500)
			if f.All.Energy.Joules != nil || f.JoulesPerOutputToken != nil || f.OutputTokensPerJoule != nil {
				t.Errorf("energy %+v, J/token %v, tokens/J %v: want none", f.All.Energy, f.JoulesPerOutputToken, f.OutputTokensPerJoule)
			}
		})
	}
}

func TestSummarizeMixedGPUs(t *testing.T) {
	gpuB := GPU{UUID: "GPU-b", Index: "1"}
	a := powerSeries(gpuA, 1e6, nil)
	b := powerSeries(gpuB, 0, func(_ int, s *GPUSample) { s.EnergyJ = nil })
	readings := make([]Reading, len(a))
	for i := range a {
		readings[i] = Reading{At: a[i].At, GPUs: append(a[i].GPUs, b[i].GPUs...)}
	}
	f := Summarize(readings, at(0), at(120), 0)
	exact := energyTo(120)
	if len(f.GPUs) != 2 {
		t.Fatalf("%d GPUs, want 2", len(f.GPUs))
	}
	if got := f.GPUs[0].Energy; got.Method != MethodCounter || math.Abs(*got.Joules-exact) > 1e-6 {
		t.Errorf("GPU with the counter: %+v (%.6f J), want counter, %.6f J", got, *got.Joules, exact)
	}
	if got := f.GPUs[1].Energy; got.Method != MethodIntegral || math.Abs(*got.Joules-exact-trapezoidError(0, 120, 1)) > 1e-6 {
		t.Errorf("GPU without the counter: %+v, want integral", got)
	}
	if got := f.All.Energy; got.Method != MethodMixed || math.Abs(*got.Joules-2*exact-trapezoidError(0, 120, 1)) > 1e-6 {
		t.Errorf("all GPUs: %+v, want mixed, the sum", got)
	}
}

func TestSummarizeStats(t *testing.T) {
	gpuB := GPU{UUID: "GPU-b", Index: "1"}
	sample := func(gpu GPU, util, mem, power float64) GPUSample {
		return GPUSample{GPU: gpu, UtilPercent: ptr(util), MemUsedMiB: ptr(mem), MemTotalMiB: ptr(8192.0), PowerW: ptr(power)}
	}
	readings := []Reading{
		{At: at(-1), GPUs: []GPUSample{sample(gpuA, 100, 99999, 999)}}, // before the window
		{At: at(0), GPUs: []GPUSample{sample(gpuA, 0, 1000, 100), sample(gpuB, 50, 2000, 200)}},
		{At: at(1), GPUs: []GPUSample{sample(gpuA, 100, 3000, 300), {GPU: gpuB, UtilPercent: ptr(50.0)}}},
		{At: at(10), GPUs: []GPUSample{sample(gpuA, 100, 3000, 300), sample(gpuB, 70, 2000, 200)}},
		{At: at(11), GPUs: []GPUSample{sample(gpuA, 0, 99999, 999)}}, // after the window
	}
	f := Summarize(readings, at(0), at(10), 0)
	check := func(what string, s Stat, mean, largest float64) {
		t.Helper()
		if s.Mean == nil || s.Max == nil || math.Abs(*s.Mean-mean) > 1e-9 || *s.Max != largest {
			t.Errorf("%s: %s, want mean %g, max %g", what, formatStat(s), mean, largest)
		}
	}
	// A's utilisation: 0 → 100 over 1 s, then 100 for 9 s: time-weighted
	// mean 95, where the plain mean would be 66.7.
	check("A util", f.GPUs[0].UtilPercent, 95, 100)
	check("A memory", f.GPUs[0].MemUsedMiB, (2000*1+3000*9)/10.0, 3000)
	check("B util", f.GPUs[1].UtilPercent, (50*1+60*9)/10.0, 70)
	check("B power (a reading without it)", f.GPUs[1].PowerW, 200, 200)
	// All: utilisation averaged over the GPUs (25, 75, 85), memory and power
	// summed, over the readings in which both GPUs have them (0 s and 10 s).
	check("all util", f.All.UtilPercent, (50*1+80*9)/10.0, 85)
	check("all memory", f.All.MemUsedMiB, 4000, 5000)
	check("all power", f.All.PowerW, 400, 500)
	if total := f.All.MemTotalMiB; total == nil || *total != 2*8192 || *f.GPUs[1].MemTotalMiB != 8192 {
		t.Errorf("memory in all %v, GPU B's %v; want 16384 and 8192", deref(total), deref(f.GPUs[1].MemTotalMiB))
	}
	if f.GPUs[0].Readings != 3 || f.GPUs[1].Readings != 3 || f.All.Readings != 3 {
		t.Errorf("readings %d, %d, all %d; want 3 each", f.GPUs[0].Readings, f.GPUs[1].Readings, f.All.Readings)
	}
}

func formatStat(s Stat) string {
	return fmt.Sprintf("mean %v, max %v", deref(s.Mean), deref(s.Max))
}

func TestSummarizeThrottle(t *testing.T) {
	gpuB := GPU{UUID: "GPU-b", Index: "1"}
	reasons := func(masks ...uint64) []Reading {
		var readings []Reading
		for i, m := range masks {
			readings = append(readings, Reading{At: at(float64(i)), GPUs: []GPUSample{{GPU: gpuA, Reasons: ptr(m)}, {GPU: gpuB}}})
		}
		return readings
	}
	tests := []struct {
		name      string
		readings  []Reading
		throttled bool
		reasons   string
	}{
		{"idle is not throttled", reasons(ReasonGPUIdle, 0, ReasonGPUIdle), false, ""},
		{"one reading with power cap and thermal slowdown", reasons(0, ReasonSWPowerCap|ReasonSWThermalSlowdown|ReasonGPUIdle, 0), true, "sw_power_cap sw_thermal_slowdown"},
		{"reasons over several readings add up", reasons(ReasonHWSlowdown, ReasonSyncBoost), true, "hw_slowdown sync_boost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Summarize(tt.readings, at(0), at(10), 0)
			a := f.GPUs[0]
			if a.Throttled != tt.throttled || strings.Join(a.ThrottleReasons, " ") != tt.reasons {
				t.Errorf("GPU A throttled %v %v, want %v %q", a.Throttled, a.ThrottleReasons, tt.throttled, tt.reasons)
			}
			if f.GPUs[1].Throttled {
				t.Error("GPU B, which gave no reasons, is throttled")
			}
			if f.All.Throttled != tt.throttled || strings.Join(f.All.ThrottleReasons, " ") != tt.reasons {
				t.Errorf("all GPUs throttled %v %v, want %v %q", f.All.Throttled, f.All.ThrottleReasons, tt.throttled, tt.reasons)
			}
		})
	}
}

func TestSummarizePerToken(t *testing.T) {
	constant := func(watts float64) []Reading {
		return []Reading{
			{At: at(0), GPUs: []GPUSample{{GPU: gpuA, PowerW: ptr(watts)}}},
			{At: at(10), GPUs: []GPUSample{{GPU: gpuA, PowerW: ptr(watts)}}},
		}
	}
	tests := []struct {
		name     string
		readings []Reading
		tokens   int64
		perToken *float64
		perJoule *float64
	}{
		{"400 W for 10 s over 2000 tokens", constant(400), 2000, ptr(2.0), ptr(0.5)},
		{"no tokens", constant(400), 0, nil, nil},
		{"no energy", constant(0), 2000, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Summarize(tt.readings, at(0), at(10), tt.tokens)
			if !sameValue(f.JoulesPerOutputToken, tt.perToken) || !sameValue(f.OutputTokensPerJoule, tt.perJoule) {
				t.Errorf("J/token %v, tokens/J %v; want %v, %v", deref(f.JoulesPerOutputToken), deref(f.OutputTokensPerJoule), deref(tt.perToken), deref(tt.perJoule))
			}
		})
	}
}

func sameValue(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return math.Abs(*a-*b) < 1e-12
}

func deref(v *float64) any {
	if v == nil {
		return "none"
	}
	return *v
}
