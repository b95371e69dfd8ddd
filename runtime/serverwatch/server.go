package serverwatch

import (
	"math"
	"time"

	"github.com/llmrun/llmrun/runtime/servermetrics"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
)

// quantiles are the quantiles a histogram figure gives.
var quantiles = []struct {
	q   float64
	set func(*summary.WindowFigure, float64)
}{
	{0.50, func(f *summary.WindowFigure, v float64) { f.P50 = &v }},
	{0.90, func(f *summary.WindowFigure, v float64) { f.P90 = &v }},
	{0.99, func(f *summary.WindowFigure, v float64) { f.P99 = &v }},
}

// serverTarget is what a server target said over the window: its engine
// (forced, found by the first read, or found now in its last snapshot),
// every figure of the engine it exposes, its scrape counts and a series
// of its running and waiting requests and KV-cache use.
func serverTarget(t *target, r servermetrics.TargetResult, win Window) summary.ServerTarget {
	out := summary.ServerTarget{URL: t.url, Kind: summary.TargetServer, Scrapes: scrapes(r.Counts), EngineForced: t.forced}
	b := windowOf(r, win)
	eng := t.engine
	if eng == nil && len(r.Series) > 0 {
		eng = engines.Detect(latest(r, b).Families)
	}
	if eng == nil {
		return out
	}
	out.Engine = eng.Name
	out.Figures = figures(eng, r, b)
	out.Series = chartSeries(eng, r.Series, win.Origin)
	return out
}

// latest is the snapshot the figures are looked up in: the window's last
// mark, else the last point of the series.
func latest(r servermetrics.TargetResult, b bounds) servermetrics.Snapshot {
	if b.toOK {
		return b.to
	}
	return r.Series[len(r.Series)-1]
}

// figures are the engine's server figures over the window, each read
// where Lookup finds it in the target's last snapshot.
func figures(eng *engines.Engine, r servermetrics.TargetResult, b bounds) map[string]summary.WindowFigure {
	if len(r.Series) == 0 {
		return nil
	}
	last := latest(r, b)
	points := servermetrics.Between(r.Series, b.start, b.end)
	out := map[string]summary.WindowFigure{}
	for _, def := range engines.Definitions {
		if def.GPU {
			continue
		}
		sel, ok := eng.Lookup(last.Families, def.Figure, nil)
		if !ok {
			continue
		}
		if f, ok := windowFigure(def, sel, points, b); ok {
			out[string(def.Figure)] = f
		}
	}
	return out
}

// windowFigure is one figure over the window: a gauge's time-weighted
// mean and maximum over the points, a counter's rise over them (restarts
// seen), a histogram's quantiles, count and sum of the observations
// between the window's marks. A counter or histogram needs both marks: a
// window whose edge mark failed would count from another time.
func windowFigure(def engines.Definition, sel engines.Selection, points []servermetrics.Snapshot, b bounds) (summary.WindowFigure, bool) {
	src := sel.Source
	by := servermetrics.Selector{Name: src.Name, Labels: src.Filter(nil)}
	f := summary.WindowFigure{Unit: string(def.Unit)}
	switch {
	case src.Kind == engines.Gauge:
		// Several series of a fraction (a KV cache per engine) average.
		per := 1.0
		if def.Combine == engines.Mean {
			per = float64(len(sel.Series))
		}
		mean, ok := servermetrics.GaugeMean(points, by)
		if !ok {
			return f, false
		}
		largest, _ := servermetrics.GaugeMax(points, by)
		mean, largest = mean*src.Scale/per, largest*src.Scale/per
		f.Kind, f.Mean, f.Max = engines.Gauge.String(), &mean, &largest
	case src.Kind == engines.Counter:
		if !b.fromOK || !b.toOK {
			return f, false
		}
		delta, ok := servermetrics.CounterIncrease(points, by)
		if !ok {
			return f, false
		}
		delta *= src.Scale
		f.Kind, f.Delta = engines.Counter.String(), &delta
	default:
		if !b.fromOK || !b.toOK {
			return f, false
		}
		h, ok := servermetrics.HistogramDelta(b.from, b.to, by)
		if !ok {
			return f, false
		}
		h = scaled(h, src.Scale)
		if src.HistogramSum {
			f.Kind, f.Delta = engines.Counter.String(), &h.Sum
			return f, true
		}
		count, sum := h.Count, h.Sum
		f.Kind, f.Count, f.Sum, f.Buckets = engines.Histogram.String(), &count, &sum, buckets(h)
		if mean, ok := h.Mean(); ok {
			f.Mean = &mean
		}
		for _, q := range quantiles {
			if v, ok := h.Quantile(q.q); ok {
				q.set(&f, v)
			}
		}
	}
	return f, true
}

// buckets are h's finite buckets as the result file keeps them.
func buckets(h servermetrics.Histogram) []summary.HistogramBucket {
	out := make([]summary.HistogramBucket, 0, len(h.Buckets))
	for _, b := range h.Buckets {
		if !math.IsInf(b.UpperBound, +1) {
			out = append(out, summary.HistogramBucket{Le: b.UpperBound, Count: b.Count})
		}
	}
	return out
}

// scaled is h in the figure's unit: its bounds and sum times by.
func scaled(h servermetrics.Histogram, by float64) servermetrics.Histogram {
	if by == 1 {
		return h
	}
	out := servermetrics.Histogram{Count: h.Count, Sum: h.Sum * by, Buckets: make([]servermetrics.Bucket, len(h.Buckets))}
	for i, bk := range h.Buckets {
		out.Buckets[i] = servermetrics.Bucket{UpperBound: bk.UpperBound * by, Count: bk.Count}
	}
	return out
}

// chartSeries are the running and waiting requests and the KV-cache use
// at each point of the series, for the charts.
func chartSeries(eng *engines.Engine, series []servermetrics.Snapshot, origin time.Time) []summary.ServerPoint {
	out := make([]summary.ServerPoint, 0, len(series))
	for _, snap := range series {
		p := summary.ServerPoint{T: seconds(snap.Time, origin)}
		p.Running = gaugeNow(eng, snap, engines.Running)
		p.Waiting = gaugeNow(eng, snap, engines.Waiting)
		p.KVCacheUsage = gaugeNow(eng, snap, engines.KVCacheUsage)
		out = append(out, p)
	}
	return out
}

// gaugeNow is a gauge figure's value in one snapshot; nil when it does
// not have it.
func gaugeNow(eng *engines.Engine, snap servermetrics.Snapshot, f engines.Figure) *float64 {
	sel, ok := eng.Lookup(snap.Families, f, nil)
	if !ok {
		return nil
	}
	v, ok := sel.Value()
	if !ok {
		return nil
	}
	return &v
}
