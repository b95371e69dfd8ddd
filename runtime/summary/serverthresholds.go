package summary

import (
	"fmt"
	"slices"

	"github.com/llmrun/llmrun/runtime/threshold"
)

// JudgeServerThresholds gives the final verdict of the thresholds on
// server and GPU figures among results (the engine's final evaluation,
// changed in place, so that the run's verdict sees them) from the
// summary's server section, and sets the summary's thresholds from
// results. Call it once the server section is attached (AttachServer). A
// threshold whose figure the section does not give, or of a run without
// one, has no samples: it fails unless its noSamples is 'pass'.
func (s *Summary) JudgeServerThresholds(results []threshold.Result) {
	threshold.JudgeServer(results, s.Server.Value)
	s.Thresholds = thresholdResults(results)
}

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
		if v, why := s.Server.Value(q); why == "" {
			s.Thresholds[i] = ThresholdResult{Metric: t.Metric, Threshold: t.Threshold, Value: v, Passed: expr.Op.Compare(v, expr.Bound)}
		}
	}
}

// Value is what a threshold on a server figure reads of the section, or
// why there is none. Over several targets the targets' values combine as
// the statistic does: increases add up, the maximum is the largest, a mean
// the targets' mean (a histogram's the pooled sum over the pooled count),
// a percentile the largest target's (no smaller than the pooled one's)
// and the prefix-cache hit rate the targets' mean. A GPU figure is read
// from each target's GPUs together (GPUTotal: utilisation averaged,
// memory, power and energy summed), gpu_energy_per_token from the
// section's energy.
func (sec *Server) Value(q threshold.ServerQuery) (float64, string) {
	if sec == nil {
		return 0, "the run has no server section"
	}
	if q.Stat == threshold.StatJoulesPerToken {
		if sec.Energy == nil || sec.Energy.JoulesPerOutputToken == nil {
			return 0, "no target measured the energy per output token"
		}
		return *sec.Energy.JoulesPerOutputToken, ""
	}
	var values, sums, counts []float64
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
		if q.Stat == threshold.StatHistogramMean {
			if f.Sum != nil && f.Count != nil && *f.Count > 0 {
				sums, counts = append(sums, *f.Sum), append(counts, *f.Count)
			}
			continue
		}
		if v := f.stat(q.Stat); v != nil {
			values = append(values, *v)
		}
	}
	if q.Stat == threshold.StatHistogramMean {
		if len(counts) == 0 {
			return 0, fmt.Sprintf("no target observed %s", q.Figure)
		}
		return sumOf(sums) / sumOf(counts), ""
	}
	if len(values) == 0 {
		return 0, fmt.Sprintf("no target gave %s's %s", q.Figure, q.Stat)
	}
	switch q.Stat {
	case threshold.StatDelta:
		return sumOf(values), ""
	case threshold.StatMean, threshold.StatHitRate:
		return sumOf(values) / float64(len(values)), ""
	}
	return slices.Max(values), ""
}

// stat is the window figure's value of statistic st, nil when it has none.
func (f WindowFigure) stat(st threshold.ServerStat) *float64 {
	switch st {
	case threshold.StatMean:
		return f.Mean
	case threshold.StatMax:
		return f.Max
	case threshold.StatDelta:
		return f.Delta
	case threshold.StatP50:
		return f.P50
	case threshold.StatP90:
		return f.P90
	case threshold.StatP99:
		return f.P99
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
