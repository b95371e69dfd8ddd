package summary

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmrun/llmrun/runtime/threshold"
)

// rejudgeServerThresholds judges the merged thresholds on server figures
// again against the merged server section, where it gives their figure:
// the instance that scraped a target judged it, the others had no
// samples. One without a value keeps its merged outcome.
func (s *Summary) rejudgeServerThresholds() {
	for i, t := range s.Thresholds {
		expr, err := threshold.ParseExpression(t.Threshold)
		if err != nil {
			continue
		}
		q, err := threshold.ServerQueryOf(t.Metric, expr)
		if err != nil {
			continue
		}
		if r := s.Server.Value(q); r.Why == "" {
			passed, note := expr.JudgeReading(r)
			s.Thresholds[i] = ThresholdResult{Metric: t.Metric, Threshold: t.Threshold, Value: r.Value, Passed: passed, Note: note}
		}
	}
}

// Value is what a threshold on a server figure reads of the section, or
// why there is none. Over several targets the targets' values combine as
// the statistic does: increases add up, the maximum is the largest, a mean
// the targets' mean (a histogram's the pooled sum over the pooled count),
// a percentile the largest target's (no smaller than the pooled one's)
// and the prefix-cache hit rate the targets' mean. A percentile is read
// by ServerQuantile's rule: where one is known only to an interval, the
// reading is that interval (the largest lower and upper ends over the
// targets) and the interpolation kept within it. A GPU figure is read
// from each target's GPUs together (GPUTotal: utilisation averaged,
// memory, power and energy summed), gpu_energy_per_token from the
// section's energy.
func (sec *Server) Value(q threshold.ServerQuery) threshold.ServerReading {
	none := func(why string) threshold.ServerReading { return threshold.ServerReading{Why: why} }
	if sec == nil {
		return none("the run has no server section")
	}
	if q.Stat == threshold.StatJoulesPerToken {
		if sec.Energy == nil || sec.Energy.JoulesPerOutputToken == nil {
			return none("no target measured the energy per output token")
		}
		return threshold.ServerReading{Value: *sec.Energy.JoulesPerOutputToken}
	}
	var values, sums, counts []float64
	var quantiles []ServerQuantile
	for _, t := range sec.Targets {
		figures := t.Figures
		if q.GPU {
			if t.GPUTotal == nil {
				continue
			}
			figures = t.GPUTotal.Figures
		}
		if q.Stat == threshold.StatHitRate {
			if t.PrefixCacheHitRate != nil {
				values = append(values, *t.PrefixCacheHitRate)
			}
			continue
		}
		f, ok := figures[string(q.Figure)]
		if !ok {
			continue
		}
		switch q.Stat {
		case threshold.StatHistogramMean:
			if f.Sum != nil && f.Count != nil && *f.Count > 0 {
				sums, counts = append(sums, *f.Sum), append(counts, *f.Count)
			}
		case threshold.StatP50, threshold.StatP90, threshold.StatP99:
			if v, ok := f.Quantile(statQuantile[q.Stat]); ok {
				quantiles = append(quantiles, v)
			}
		default:
			if v := f.stat(q.Stat); v != nil {
				values = append(values, *v)
			}
		}
	}
	switch q.Stat {
	case threshold.StatHistogramMean:
		if len(counts) == 0 {
			return none(fmt.Sprintf("no target observed %s", q.Figure))
		}
		return threshold.ServerReading{Value: sumOf(sums) / sumOf(counts)}
	case threshold.StatP50, threshold.StatP90, threshold.StatP99:
		return largestQuantile(quantiles, q)
	}
	if len(values) == 0 {
		return none(fmt.Sprintf("no target gave %s's %s", q.Figure, q.Stat))
	}
	switch q.Stat {
	case threshold.StatDelta:
		return threshold.ServerReading{Value: sumOf(values)}
	case threshold.StatMean, threshold.StatHitRate:
		return threshold.ServerReading{Value: sumOf(values) / float64(len(values))}
	}
	return threshold.ServerReading{Value: slices.Max(values)}
}

// statQuantile is the quantile of a percentile statistic.
var statQuantile = map[threshold.ServerStat]float64{threshold.StatP50: 0.5, threshold.StatP90: 0.9, threshold.StatP99: 0.99}

// largestQuantile is the reading of the largest of the targets'
// quantiles: the largest value, and where any is an interval, the
// interval of the largest (each end the largest over the targets, a
// number standing for both ends).
func largestQuantile(quantiles []ServerQuantile, q threshold.ServerQuery) threshold.ServerReading {
	if len(quantiles) == 0 {
		return threshold.ServerReading{Why: fmt.Sprintf("no target gave %s's %s", q.Figure, q.Stat)}
	}
	r := threshold.ServerReading{Value: math.Inf(-1), Lower: math.Inf(-1), Upper: math.Inf(-1)}
	for _, v := range quantiles {
		lower, upper := v.Value(), v.Value()
		if !v.IsNumber() {
			lower, upper, r.Interval = v.Lower, v.Upper, true
		}
		r.Value, r.Lower, r.Upper = max(r.Value, v.Value()), max(r.Lower, lower), max(r.Upper, upper)
	}
	if !r.Interval {
		r.Lower, r.Upper = 0, 0
	}
	return r
}

// stat is the window figure's value of a gauge's or counter's statistic
// st, nil when it has none.
func (f WindowFigure) stat(st threshold.ServerStat) *float64 {
	switch st {
	case threshold.StatMean:
		return f.Mean
	case threshold.StatMax:
		return f.Max
	case threshold.StatDelta:
		return f.Delta
	}
	return nil
}

// sumOf is the sum of xs.
func sumOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}
