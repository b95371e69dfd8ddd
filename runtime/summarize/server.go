package summarize

import (
	"maps"
	"math"
	"slices"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// AttachServer sets the summary s's server section from what the scrape
// targets gave over the measured window, once the client's figures are
// final (the serving block, the load shape, the timeline): the URLs are
// redacted, values that are not finite numbers dropped, each series
// thinned to MaxServerPoints, and the prefix-cache hit rate, the energy
// per output token and the warnings derived. No target leaves the summary
// without a server section.
func AttachServer(s *summary.Summary, targets []summary.ServerTarget) {
	if len(targets) == 0 {
		s.Server = nil
		return
	}
	sec := &summary.Server{Targets: make([]summary.ServerTarget, len(targets))}
	for i, t := range targets {
		sec.Targets[i] = normalTarget(t)
	}
	s.Server = sec
	s.FinishServer()
}

// normalTarget is t as the result file keeps it.
func normalTarget(t summary.ServerTarget) summary.ServerTarget {
	t.URL = llm.RedactURL(t.URL)
	t.Scrapes.Failed = maps.Clone(t.Scrapes.Failed)
	t.Figures = finiteFigures(t.Figures)
	t.GPUs = slices.Clone(t.GPUs)
	for i := range t.GPUs {
		t.GPUs[i].Figures = finiteFigures(t.GPUs[i].Figures)
	}
	if t.GPUTotal != nil {
		total := *t.GPUTotal
		total.Figures = finiteFigures(total.Figures)
		t.GPUTotal = &total
	}
	if t.Energy != nil && !finite(t.Energy.Joules) {
		t.Energy = nil
	} else if t.Energy != nil {
		t.Energy = &summary.Energy{Joules: t.Energy.Joules, Method: t.Energy.Method}
	}
	t.Series = thinSeries(t.Series, summary.MaxServerPoints)
	t.PrefixCacheHitRate = prefixCacheHitRate(t.Figures)
	return t
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// finitePtr is p, or nil when it points to no finite number.
func finitePtr(p *float64) *float64 {
	if p == nil || !finite(*p) {
		return nil
	}
	v := *p
	return &v
}

// finiteFigures copies figures with only their finite values: a quantile
// of an empty histogram (NaN) is absent, never written (JSON has no NaN).
func finiteFigures(figures map[string]summary.WindowFigure) map[string]summary.WindowFigure {
	if len(figures) == 0 {
		return nil
	}
	out := make(map[string]summary.WindowFigure, len(figures))
	for name, f := range figures {
		out[name] = summary.WindowFigure{Kind: f.Kind, Unit: f.Unit, Mean: finitePtr(f.Mean), Max: finitePtr(f.Max), Delta: finitePtr(f.Delta),
			P50: finitePtr(f.P50), P90: finitePtr(f.P90), P99: finitePtr(f.P99), Count: finitePtr(f.Count), Sum: finitePtr(f.Sum),
			Buckets: finiteBuckets(f.Buckets)}
	}
	return out
}

// finiteBuckets copies the buckets whose bound and count are finite
// numbers (the +Inf bucket is left out, its count being the figure's),
// at most MaxServerBuckets of them.
func finiteBuckets(buckets []summary.HistogramBucket) []summary.HistogramBucket {
	var kept []summary.HistogramBucket
	for _, b := range buckets {
		if finite(b.Le) && finite(b.Count) {
			kept = append(kept, b)
		}
	}
	if len(kept) <= summary.MaxServerBuckets {
		return kept
	}
	step := (len(kept) + summary.MaxServerBuckets - 1) / summary.MaxServerBuckets
	out := make([]summary.HistogramBucket, 0, summary.MaxServerBuckets)
	for i := step - 1; i < len(kept); i += step {
		out = append(out, kept[i])
	}
	if last := kept[len(kept)-1]; out[len(out)-1] != last {
		out = append(out, last)
	}
	return out
}

// prefixCacheHitRate is the server's hit rate over the window as it
// counts it: the delta of its hits over that of its queries, else the
// mean of the rate it exposes; nil when neither is there or it looked no
// token up.
func prefixCacheHitRate(figures map[string]summary.WindowFigure) *float64 {
	hits, queries := figures[string(engines.PrefixCacheHits)].Delta, figures[string(engines.PrefixCacheQueries)].Delta
	if hits != nil && queries != nil {
		if *queries <= 0 {
			return nil
		}
		rate := min(*hits / *queries, 1)
		return &rate
	}
	return finitePtr(figures[string(engines.PrefixCacheHitRate)].Mean)
}

// thinSeries returns points with at most limit of them: when longer, each
// run of ⌈len/limit⌉ consecutive points becomes one, at the time of its
// last, each figure the mean of the run's points that have it. Values that
// are not finite numbers are dropped.
func thinSeries(points []summary.ServerPoint, limit int) []summary.ServerPoint {
	if len(points) == 0 {
		return nil
	}
	step := (len(points) + limit - 1) / limit
	out := make([]summary.ServerPoint, 0, (len(points)+step-1)/step)
	for start := 0; start < len(points); start += step {
		run := points[start:min(start+step, len(points))]
		out = append(out, summary.ServerPoint{T: run[len(run)-1].T,
			Running:        meanOf(run, func(p summary.ServerPoint) *float64 { return p.Running }),
			Waiting:        meanOf(run, func(p summary.ServerPoint) *float64 { return p.Waiting }),
			KVCacheUsage:   meanOf(run, func(p summary.ServerPoint) *float64 { return p.KVCacheUsage }),
			GPUUtilization: meanOf(run, func(p summary.ServerPoint) *float64 { return p.GPUUtilization }),
			GPUPower:       meanOf(run, func(p summary.ServerPoint) *float64 { return p.GPUPower })})
	}
	return out
}

// meanOf is the mean of a field over the points that have it as a finite
// number, nil when none has.
func meanOf(points []summary.ServerPoint, field func(summary.ServerPoint) *float64) *float64 {
	var sum float64
	var n int
	for _, p := range points {
		if v := finitePtr(field(p)); v != nil {
			sum += *v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	mean := sum / float64(n)
	return &mean
}

// JudgeServerThresholds gives the final verdict of the thresholds on
// server and GPU figures among results (the engine's final evaluation,
// changed in place, so that the run's verdict sees them) from the
// summary's server section, and sets the summary's thresholds from
// results. Call it once the server section is attached (AttachServer). A
// threshold whose figure the section does not give, or of a run without
// one, has no samples: it fails unless its noSamples is 'pass'.
func JudgeServerThresholds(s *summary.Summary, results []threshold.Result) {
	threshold.JudgeServer(results, s.Server.Value)
	s.Thresholds = thresholdResults(results)
}
