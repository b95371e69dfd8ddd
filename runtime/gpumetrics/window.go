package gpumetrics

import (
	"sort"
	"time"
)

// Method says how a window's energy was found.
type Method string

const (
	// MethodCounter is the delta of the GPU's energy counter between the
	// window's first and last readings.
	MethodCounter Method = "counter"
	// MethodIntegral is the power integrated over the readings by the
	// trapezoid rule.
	MethodIntegral Method = "integral"
	// MethodMixed is a sum over GPUs some of which were measured by their
	// counter and some by the integral.
	MethodMixed Method = "mixed"
)

// Stat is a quantity's time-weighted mean and its largest reading; nil
// when no reading in the window had it.
type Stat struct {
	Mean *float64 `json:"mean,omitempty"`
	Max  *float64 `json:"max,omitempty"`
}

// Energy is the energy used over a window, in joules, and how it was
// found. Joules is nil when it cannot be found.
type Energy struct {
	Joules *float64 `json:"joules,omitempty"`
	Method Method   `json:"method,omitempty"`
	// Resets counts the times the energy counter went back during the
	// window (a driver reload, a GPU reset, or a wrap).
	Resets int `json:"resets,omitempty"`
}

// GPUFigures are one GPU's figures over a window, or all GPUs' (Figures.All,
// whose GPU is empty).
type GPUFigures struct {
	GPU GPU `json:"gpu"`
	// Readings is how many readings in the window had this GPU (for All,
	// how many readings there were).
	Readings    int  `json:"readings"`
	UtilPercent Stat `json:"util_percent"`
	MemUsedMiB  Stat `json:"mem_used_mib"`
	// MemTotalMiB is the GPU's memory in all (the largest reading of it;
	// for All the sum over GPUs), nil when unknown.
	MemTotalMiB *float64 `json:"mem_total_mib,omitempty"`
	PowerW      Stat     `json:"power_w"`
	Energy      Energy   `json:"energy"`
	// Throttled is whether any reading in the window had a clock event
	// reason other than gpu_idle; ThrottleReasons names every such reason
	// seen.
	Throttled       bool     `json:"throttled"`
	ThrottleReasons []string `json:"throttle_reasons,omitempty"`
	// reasons is the mask of every reason seen, gpu_idle excluded.
	reasons uint64
}

// Figures are a window's GPU figures: per GPU, over all GPUs, and the
// energy per output token.
type Figures struct {
	From time.Time    `json:"from"`
	To   time.Time    `json:"to"`
	GPUs []GPUFigures `json:"gpus"`
	// All sums memory, power and energy over the GPUs and averages their
	// utilisation, reading by reading.
	All          GPUFigures `json:"all"`
	OutputTokens int64      `json:"output_tokens"`
	// JoulesPerOutputToken and OutputTokensPerJoule are nil when the
	// window has no output tokens or its energy is unknown or zero.
	JoulesPerOutputToken *float64 `json:"joules_per_output_token,omitempty"`
	OutputTokensPerJoule *float64 `json:"output_tokens_per_joule,omitempty"`
}

// Summarize computes the figures of the readings taken from from to to
// (both included), for a window in which outputTokens output tokens were
// generated. The energy of each GPU is its counter's delta when every one
// of its readings in the window has the counter, and its power integrated
// otherwise; either way it covers the span from the GPU's first reading in
// the window to its last, so readings taken at the window's edges make it
// the whole window's.
func Summarize(readings []Reading, from, to time.Time, outputTokens int64) Figures {
	var in []Reading
	for _, r := range readings {
		if !r.At.Before(from) && !r.At.After(to) {
			in = append(in, r)
		}
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].At.Before(in[j].At) })

	byGPU := map[string][]timedSample{}
	var keys []string
	for _, r := range in {
		for _, s := range r.GPUs {
			key := s.GPU.Key()
			if _, seen := byGPU[key]; !seen {
				keys = append(keys, key)
			}
			byGPU[key] = append(byGPU[key], timedSample{at: r.At, GPUSample: s})
		}
	}

	f := Figures{From: from, To: to, OutputTokens: outputTokens}
	for _, key := range keys {
		f.GPUs = append(f.GPUs, gpuFigures(byGPU[key]))
	}
	f.All = allFigures(in, keys, f.GPUs)
	if j := f.All.Energy.Joules; j != nil && *j > 0 && outputTokens > 0 {
		f.JoulesPerOutputToken = ptr(*j / float64(outputTokens))
		f.OutputTokensPerJoule = ptr(float64(outputTokens) / *j)
	}
	return f
}

type timedSample struct {
	at time.Time
	GPUSample
}

// point is one known value of a quantity at a time.
type point struct {
	at time.Time
	v  float64
}

func pointsOf(samples []timedSample, field func(GPUSample) *float64) []point {
	var points []point
	for _, s := range samples {
		if v := field(s.GPUSample); v != nil {
			points = append(points, point{s.at, *v})
		}
	}
	return points
}

func gpuFigures(samples []timedSample) GPUFigures {
	f := GPUFigures{GPU: samples[len(samples)-1].GPU, Readings: len(samples)}
	f.UtilPercent = stat(pointsOf(samples, func(s GPUSample) *float64 { return s.UtilPercent }))
	f.MemUsedMiB = stat(pointsOf(samples, func(s GPUSample) *float64 { return s.MemUsedMiB }))
	f.MemTotalMiB = stat(pointsOf(samples, func(s GPUSample) *float64 { return s.MemTotalMiB })).Max
	power := pointsOf(samples, func(s GPUSample) *float64 { return s.PowerW })
	f.PowerW = stat(power)
	f.Energy = energy(samples, power)
	var seen uint64
	for _, s := range samples {
		if s.Reasons != nil {
			seen |= *s.Reasons
		}
	}
	f.setThrottle(seen)
	return f
}

func (f *GPUFigures) setThrottle(reasons uint64) {
	reasons &^= ReasonGPUIdle
	f.reasons = reasons
	f.Throttled = reasons != 0
	f.ThrottleReasons = ReasonNames(reasons)
}

// energy is a GPU's energy over its samples: the counter's delta when
// every sample has the counter, else the integral of its power.
func energy(samples []timedSample, power []point) Energy {
	counter := pointsOf(samples, func(s GPUSample) *float64 { return s.EnergyJ })
	if len(samples) >= 2 && len(counter) == len(samples) {
		return counterDelta(samples)
	}
	if len(power) < 2 {
		return Energy{}
	}
	joules, _ := integrate(power)
	return Energy{Joules: &joules, Method: MethodIntegral}
}

// counterDelta adds up the counter's increases between consecutive
// samples. Where it went back (a reset or a wrap) the energy of that step
// is its power integrated when both samples have power, else the
// counter's value after the reset (it counted from zero, the rule of
// Prometheus' increase()).
func counterDelta(samples []timedSample) Energy {
	e := Energy{Method: MethodCounter}
	var joules float64
	for i := 1; i < len(samples); i++ {
		prev, next := samples[i-1], samples[i]
		if *next.EnergyJ >= *prev.EnergyJ {
			joules += *next.EnergyJ - *prev.EnergyJ
			continue
		}
		e.Resets++
		if prev.PowerW != nil && next.PowerW != nil {
			step, _ := integrate([]point{{prev.at, *prev.PowerW}, {next.at, *next.PowerW}})
			joules += step
		} else {
			joules += *next.EnergyJ
		}
	}
	e.Joules = &joules
	return e
}

// integrate is the trapezoid-rule integral of the points over time (in
// value·seconds) and the span it covers.
func integrate(points []point) (area float64, span time.Duration) {
	for i := 1; i < len(points); i++ {
		dt := points[i].at.Sub(points[i-1].at)
		area += (points[i].v + points[i-1].v) / 2 * dt.Seconds()
		span += dt
	}
	return area, span
}

// stat is the points' time-weighted mean (their trapezoid integral over
// their span; the plain mean when they span no time) and maximum.
func stat(points []point) Stat {
	if len(points) == 0 {
		return Stat{}
	}
	largest, sum := points[0].v, 0.0
	for _, p := range points {
		largest = max(largest, p.v)
		sum += p.v
	}
	mean := sum / float64(len(points))
	if area, span := integrate(points); span > 0 {
		mean = area / span.Seconds()
	}
	return Stat{Mean: &mean, Max: &largest}
}

// allFigures combines the GPUs: per reading, the sum of their memory and
// power and the mean of their utilisation, over the readings in which
// every GPU of the window had the quantity; the energy is the sum of the
// GPUs' when every GPU's is known.
func allFigures(readings []Reading, keys []string, gpus []GPUFigures) GPUFigures {
	f := GPUFigures{Readings: len(readings)}
	f.UtilPercent = stat(combined(readings, len(keys), func(s GPUSample) *float64 { return s.UtilPercent }, true))
	f.MemUsedMiB = stat(combined(readings, len(keys), func(s GPUSample) *float64 { return s.MemUsedMiB }, false))
	f.PowerW = stat(combined(readings, len(keys), func(s GPUSample) *float64 { return s.PowerW }, false))
	var seen uint64
	var joules, memTotal float64
	known, memKnown := len(gpus) > 0, len(gpus) > 0
	for _, g := range gpus {
		seen |= g.reasons
		if g.MemTotalMiB == nil {
			memKnown = false
		} else {
			memTotal += *g.MemTotalMiB
		}
		if g.Energy.Joules == nil {
			known = false
			continue
		}
		joules += *g.Energy.Joules
		f.Energy.Resets += g.Energy.Resets
		if f.Energy.Method == "" || f.Energy.Method == g.Energy.Method {
			f.Energy.Method = g.Energy.Method
		} else {
			f.Energy.Method = MethodMixed
		}
	}
	if known {
		f.Energy.Joules = &joules
	} else {
		f.Energy = Energy{}
	}
	if memKnown {
		f.MemTotalMiB = &memTotal
	}
	f.setThrottle(seen)
	return f
}

// combined is, for each reading that has the quantity for all n GPUs, their
// sum (or mean).
func combined(readings []Reading, n int, field func(GPUSample) *float64, mean bool) []point {
	var points []point
	for _, r := range readings {
		var sum float64
		count := 0
		for _, s := range r.GPUs {
			if v := field(s); v != nil {
				sum += *v
				count++
			}
		}
		if count == 0 || count < n {
			continue
		}
		if mean {
			sum /= float64(count)
		}
		points = append(points, point{r.At, sum})
	}
	return points
}
