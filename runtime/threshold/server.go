package threshold

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
)

// Thresholds on the server's and its GPUs' figures (the result file's
// server section) name a canonical figure of runtime/servermetrics/
// engines: server_ and the figure for a server figure
// (server_kv_cache_usage, server_queue_time, server_preemptions), the
// figure itself for a GPU figure (gpu_power, gpu_utilization), and two
// figures the section derives: server_prefix_cache_hit_rate and
// gpu_energy_per_token. They are judged once, at the end of the run,
// against the summary's server section (see ServerValue); during the run
// they are not judged. The aggregations follow the figure's kind:
//
//	gauge      avg (time-weighted mean over the window), max
//	counter    count (its increase over the window)
//	histogram  avg (sum/count), med, p(50), p(90), p(99) (of the bucket deltas)
//	server_prefix_cache_hit_rate  rate (hits over queries, 0..1)
//	gpu_energy_per_token          avg (joules per output token of the run)

// The names of the thresholds on the figures the server section derives.
const (
	ServerPrefixCacheHitRate = "server_prefix_cache_hit_rate"
	GPUEnergyPerToken        = "gpu_energy_per_token"
)

// serverPrefix starts the threshold name of a server figure.
const serverPrefix = "server_"

// ServerStat is the statistic of a server section's figure a threshold
// reads.
type ServerStat string

// The statistics a server threshold reads.
const (
	StatMean  ServerStat = "mean"  // a gauge's time-weighted mean
	StatMax   ServerStat = "max"   // a gauge's maximum
	StatDelta ServerStat = "delta" // a counter's increase
	StatP50   ServerStat = "p50"
	StatP90   ServerStat = "p90"
	StatP99   ServerStat = "p99"
	// StatHistogramMean is a histogram's sum over its count.
	StatHistogramMean ServerStat = "histogram mean"
	// StatHitRate is the section's prefix-cache hit rate.
	StatHitRate ServerStat = "hit rate"
	// StatJoulesPerToken is the section's joules per output token.
	StatJoulesPerToken ServerStat = "joules per output token"
)

// ServerQuery is what a threshold on a server figure reads of the server
// section: a statistic of a canonical figure, of the server targets'
// figures or, for a GPU figure, of their GPUs' together.
type ServerQuery struct {
	Figure engines.Figure
	GPU    bool
	Stat   ServerStat
}

// serverFigure is the figure a threshold name names, and false when it
// names none.
func serverFigure(name string) (engines.Definition, bool) {
	switch name {
	case ServerPrefixCacheHitRate:
		return engines.Definition{Figure: engines.PrefixCacheHitRate, Unit: engines.UnitFraction}, true
	case GPUEnergyPerToken:
		return engines.Definition{Figure: GPUEnergyPerToken, Unit: engines.UnitJoules, GPU: true}, true
	}
	for _, d := range engines.Definitions {
		if d.GPU && name == string(d.Figure) || !d.GPU && name == serverPrefix+string(d.Figure) {
			return d, true
		}
	}
	return engines.Definition{}, false
}

// ServerNames are the names of every threshold on a server figure, in the
// order of engines.Definitions, the derived figures last.
func ServerNames() []string {
	var names []string
	for _, d := range engines.Definitions {
		if d.GPU {
			names = append(names, string(d.Figure))
		} else {
			names = append(names, serverPrefix+string(d.Figure))
		}
	}
	return append(names, ServerPrefixCacheHitRate, GPUEnergyPerToken)
}

// IsServerName reports whether name is a threshold name of a server or
// GPU figure.
func IsServerName(name string) bool {
	_, ok := serverFigure(name)
	return ok
}

// ServerQueryOf is what a threshold on the server figure name with
// aggregation e reads, or an error saying which aggregations the figure
// takes, or that name is none.
func ServerQueryOf(name string, e Expression) (ServerQuery, error) {
	if !IsServerName(name) {
		return ServerQuery{}, fmt.Errorf("%q is not a server figure", name)
	}
	return serverQuery(name, e)
}

// serverQuery is what a threshold named name with aggregation e reads, or
// an error saying which aggregations the figure takes.
func serverQuery(name string, e Expression) (ServerQuery, error) {
	d, _ := serverFigure(name)
	q := ServerQuery{Figure: d.Figure, GPU: d.GPU}
	var want string
	switch {
	case name == ServerPrefixCacheHitRate:
		q.Stat, want = map[Method]ServerStat{MethodRate: StatHitRate}[e.Method], "rate"
	case name == GPUEnergyPerToken:
		q.Stat, want = map[Method]ServerStat{MethodAvg: StatJoulesPerToken}[e.Method], "avg"
	case d.Kind == engines.Gauge:
		q.Stat, want = map[Method]ServerStat{MethodAvg: StatMean, MethodMax: StatMax}[e.Method], "avg or max"
	case d.Kind == engines.Counter:
		q.Stat, want = map[Method]ServerStat{MethodCount: StatDelta}[e.Method], "count"
	case d.Kind == engines.Histogram:
		want = "avg, med, p(50), p(90) or p(99)"
		switch {
		case e.Method == MethodAvg:
			q.Stat = StatHistogramMean
		case e.Method == MethodMed || e.Method == MethodPercentile && e.P == 50:
			q.Stat = StatP50
		case e.Method == MethodPercentile && e.P == 90:
			q.Stat = StatP90
		case e.Method == MethodPercentile && e.P == 99:
			q.Stat = StatP99
		}
	}
	if q.Stat == "" {
		kind := "server figure"
		if d.Kind != 0 {
			kind = "server " + d.Kind.String()
		}
		return q, fmt.Errorf("aggregation %q does not apply to %s %q: want %s", e.Aggregation(), kind, name, want)
	}
	return q, nil
}

// validateServer checks a threshold on a server figure: no tag filter, no
// abortOnFail (it is judged only at the end), an aggregation its figure
// takes; it binds the threshold to what it reads.
func (t *Threshold) validateServer() error {
	switch {
	case t.Tags != nil:
		return errors.New("a server figure takes no tag filter: its figures are the server targets' together")
	case t.AbortOnFail:
		return errors.New("abortOnFail does not apply to a server figure: it is judged once, at the end of the run")
	}
	q, err := serverQuery(t.Metric, t.Expr)
	if err != nil {
		return err
	}
	t.server = &q
	return nil
}

// Server is what the threshold reads of the server section, and false for
// a threshold on a metric of the run.
func (t *Threshold) Server() (ServerQuery, bool) {
	if t.server == nil {
		return ServerQuery{}, false
	}
	return *t.server, true
}

// evaluateServer is the result of a threshold on a server figure without
// the server section: during the run it is not judged (passed); at the
// end it has no samples: noSamples: 'pass' passes it, anything else fails
// it.
func (t *Threshold) evaluateServer(r Result, end *End) Result {
	r.NoSamples = true
	if end == nil {
		r.Passed, r.Note = true, "a server figure: judged at the end of the run"
		return r
	}
	return t.serverWithoutValue(r, "the run has no server section")
}

// serverWithoutValue gives the verdict of a server threshold whose figure
// has no value: why says why.
func (t *Threshold) serverWithoutValue(r Result, why string) Result {
	r.NoSamples, r.Evaluated, r.Value = true, false, 0
	if t.NoSamples == NoSamplesPass {
		r.Passed, r.Note = true, "no samples: "+why+" (accepted: noSamples is 'pass')"
		return r
	}
	r.Passed, r.Note = false, "no samples: "+why+" (noSamples: 'pass' accepts that)"
	return r
}

// ServerReading is what a threshold on a server figure reads of the
// server section: the figure's value, or Why it has none. A quantile
// known only to an interval (the server's bucket, tightened by the
// mean: summary.ServerQuantile) has Interval set, Lower < x ≤ Upper,
// and Value within it (Prometheus' interpolation, kept within).
type ServerReading struct {
	Value        float64
	Interval     bool
	Lower, Upper float64
	Why          string
}

// JudgeReading is the verdict of e on a server reading with a note for a
// quantile known only to an interval: whether the whole interval passes
// or fails, or the bound falls inside it and the verdict rests on the
// interpolation. The verdict is e on the Value, which agrees with the
// interval wherever the interval decides.
func (e Expression) JudgeReading(r ServerReading) (passed bool, note string) {
	passed = e.Op.Compare(r.Value, e.Bound)
	if !r.Interval {
		return passed, ""
	}
	known := fmt.Sprintf("%s is known only to lie in (%s, %s], the server's histogram bucket and the bound its mean gives", e.Aggregation(), noteNumber(r.Lower), noteNumber(r.Upper))
	atLower, atUpper := e.Op.Compare(r.Lower, e.Bound), e.Op.Compare(r.Upper, e.Bound)
	decided := atLower == atUpper && e.Op != OpEqual && e.Op != OpStrictEqual && e.Op != OpNotEqual
	switch {
	case decided && atUpper:
		return passed, known + ": all of it passes"
	case decided:
		return passed, known + ": all of it fails"
	}
	return passed, known + ": the bound falls inside it, so the verdict rests on the interpolation within the bucket (kept within the interval), " + noteNumber(r.Value)
}

// noteNumber writes a figure's value for a note.
func noteNumber(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// JudgeServer gives the final verdict of the thresholds on server figures
// among results (EvaluateEnd's, changed in place) from value, which reads
// a query of the run's server section (ServerReading). Results on the
// run's metrics are left as they are.
func JudgeServer(results []Result, value func(ServerQuery) ServerReading) {
	for i, r := range results {
		t := r.Threshold
		if t == nil || t.server == nil {
			continue
		}
		reading := value(*t.server)
		if reading.Why != "" {
			results[i] = t.serverWithoutValue(r, reading.Why)
			continue
		}
		r.Value, r.Evaluated, r.NoSamples = reading.Value, true, false
		r.Passed, r.Note = t.Expr.JudgeReading(reading)
		results[i] = r
	}
}
