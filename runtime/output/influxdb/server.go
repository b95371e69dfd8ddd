package influxdb

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/summary"
)

// The measurements of a run's server section (docs/influxdb.md).
const (
	mServer       = "llm_server"
	mServerSeries = "llm_server_series"
)

// allTargets is the target tag of the llm_server point of the whole
// section (its energy summed over the targets, per output token).
const allTargets = "_all"

// serverPoints are the points of the run's server section, none when it
// has none: per target an llm_server point of its window figures and one
// per GPU (tag gpu), one for the section as a whole (target _all), all
// at time at, the run's start; and each target's series as
// llm_server_series points at their own times, T seconds after at.
func serverPoints(s *summary.Summary, tags runTags, at time.Time) []*write.Point {
	sec := s.Server
	if sec == nil {
		return nil
	}
	model := joinModels(s.Meta.Models)
	all := tags.point(mServer, at, "model", model, "target", allTargets)
	all.AddField("targets", len(sec.Targets))
	all.AddField("warnings", len(sec.Warnings))
	if e := sec.Energy; e != nil {
		energyFields(all, *e)
		all.AddField("output_tokens", e.OutputTokens)
		if e.JoulesPerOutputToken != nil {
			addFloat(all, "joules_per_output_token", *e.JoulesPerOutputToken)
		}
		if e.OutputTokensPerJoule != nil {
			addFloat(all, "output_tokens_per_joule", *e.OutputTokensPerJoule)
		}
	}
	points := []*write.Point{all}
	for _, t := range sec.Targets {
		kv := []string{"model", model, "target", llm.RedactURL(t.URL), "kind", t.Kind, "engine", t.Engine, "instance", t.Instance}
		p := tags.point(mServer, at, kv...)
		figureFields(p, t.Figures)
		if t.GPUTotal != nil {
			figureFields(p, withoutKeys(t.GPUTotal.Figures, t.Figures))
		}
		if t.PrefixCacheHitRate != nil {
			addFloat(p, "prefix_cache_hit_rate", *t.PrefixCacheHitRate)
		}
		if t.Energy != nil {
			energyFields(p, *t.Energy)
		}
		if t.Version != "" {
			p.AddField("version", t.Version)
		}
		p.AddField("gpus", len(t.GPUs))
		p.AddField("scrapes_ok", t.Scrapes.OK)
		p.AddField("scrapes_failed", t.Scrapes.Failures())
		p.AddField("scrapes_skipped", t.Scrapes.Skipped)
		for _, kind := range slices.Sorted(maps.Keys(t.Scrapes.Failed)) {
			p.AddField("scrapes_failed_"+kind, t.Scrapes.Failed[kind])
		}
		points = append(points, p)
		for i, g := range t.GPUs {
			points = append(points, gpuPoint(g, i, tags, at, kv))
		}
		for _, sp := range t.Series {
			points = append(points, seriesPoint(sp, tags, at, kv))
		}
	}
	return points
}

// gpuPoint is the llm_server point of the i-th GPU of a target whose
// tags are kv: its gpu tag is the GPU's index as the telemetry labels it,
// else its UUID, else i, so that it never lands on the target's point.
func gpuPoint(g summary.GPU, i int, tags runTags, at time.Time, kv []string) *write.Point {
	id := cmp.Or(g.ID, g.UUID, strconv.Itoa(i))
	p := tags.point(mServer, at, append(slices.Clip(kv), "gpu", id)...)
	figureFields(p, g.Figures)
	for k, v := range map[string]string{"gpu_uuid": g.UUID, "gpu_model": g.Model, "gpu_host": g.Host} {
		if v != "" {
			p.AddField(k, v)
		}
	}
	if g.ClockEventReasons != nil {
		p.AddField("clock_event_reasons", int64(*g.ClockEventReasons))
	}
	return p
}

// seriesPoint is the llm_server_series point of a point of a target's
// series, whose tags are kv.
func seriesPoint(sp summary.ServerPoint, tags runTags, at time.Time, kv []string) *write.Point {
	p := tags.point(mServerSeries, at.Add(time.Duration(sp.T*float64(time.Second))), kv...)
	for k, v := range map[string]*float64{"running": sp.Running, "waiting": sp.Waiting, "kv_cache_usage": sp.KVCacheUsage,
		"gpu_utilization": sp.GPUUtilization, "gpu_power_watts": sp.GPUPower} {
		if v != nil {
			addFloat(p, k, *v)
		}
	}
	return p
}

// energyFields add energy_joules and energy_method.
func energyFields(p *write.Point, e summary.Energy) {
	addFloat(p, "energy_joules", e.Joules)
	p.AddField("energy_method", e.Method)
}

// figureFields add F_mean, F_max, F_delta, F_p50, F_p90, F_p99, F_count
// and F_sum of each window figure F that has them, in its unit.
func figureFields(p *write.Point, figures map[string]summary.WindowFigure) {
	for name, f := range figures {
		for stat, v := range map[string]*float64{"mean": f.Mean, "max": f.Max, "delta": f.Delta, "p50": f.P50, "p90": f.P90,
			"p99": f.P99, "count": f.Count, "sum": f.Sum} {
			if v != nil {
				addFloat(p, name+"_"+stat, *v)
			}
		}
	}
}

// withoutKeys is figures without those also in other.
func withoutKeys(figures, other map[string]summary.WindowFigure) map[string]summary.WindowFigure {
	out := maps.Clone(figures)
	maps.DeleteFunc(out, func(k string, _ summary.WindowFigure) bool { _, ok := other[k]; return ok })
	return out
}
