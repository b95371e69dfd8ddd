package regression

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// The server's figures, from the result files' server sections: why a run
// got slower, judged beside the client's. Each is a statistic of a
// canonical figure (runtime/servermetrics/engines) of a scrape target,
// compared with the same target of the other run. Only a figure whose
// noise the section can bound gets a verdict; the others show their
// change without one (NotJudged), as docs/results.md says.

// serverFigure is a server figure compare judges: a statistic of a
// canonical figure.
type serverFigure struct {
	Figure
	source engines.Figure
	stat   string // p50, p99, max, delta, rate, mean or per_token
}

// serverFigures are the server figures compare judges, in the order it
// shows them; the first ones, of a server target, start with "server_",
// the others, of GPU telemetry, with "gpu_".
var serverFigures = []serverFigure{
	{Figure{"server_queue_time_p50", "ms", LowerIsBetter}, engines.QueueTime, "p50"},
	{Figure{"server_queue_time_p99", "ms", LowerIsBetter}, engines.QueueTime, "p99"},
	{Figure{"server_prefill_time_p99", "ms", LowerIsBetter}, engines.PrefillTime, "p99"},
	{Figure{"server_ttft_p99", "ms", LowerIsBetter}, engines.TTFT, "p99"},
	{Figure{"server_kv_cache_usage_max", "%", LowerIsBetter}, engines.KVCacheUsage, "max"},
	{Figure{"server_preemptions", "req", LowerIsBetter}, engines.Preemptions, "delta"},
	{Figure{"server_prefix_cache_hit_rate", "%", HigherIsBetter}, engines.PrefixCacheHitRate, "rate"},
	{Figure{"gpu_power_mean", "W", LowerIsBetter}, engines.GPUPower, "mean"},
	{Figure{"gpu_energy_per_token", "J/tok", LowerIsBetter}, engines.GPUEnergy, "per_token"},
}

// ServerHeadline returns the server figures compare judges by default
// when a run has a server section, in the order it shows them.
func ServerHeadline() []Figure {
	out := make([]Figure, len(serverFigures))
	for i, f := range serverFigures {
		out[i] = f.Figure
	}
	return out
}

// Server says whether the figure is the server's or its GPUs' (a server
// section's), not the client's: the server measured it, so a client short
// of CPU does not measure it wrong.
func (f Figure) Server() bool {
	return strings.HasPrefix(f.Name, "server_") || strings.HasPrefix(f.Name, "gpu_")
}

// gpu says whether the figure is read from GPU telemetry.
func (f Figure) gpu() bool { return strings.HasPrefix(f.Name, "gpu_") }

// lookupServer returns the server figure of a name.
func lookupServer(name string) (Figure, bool) {
	for _, f := range serverFigures {
		if f.Name == name {
			return f.Figure, true
		}
	}
	return Figure{}, false
}

// ServerSide is what a run's server figures are read from: the targets
// of its server section (none when it has none) and the run's output
// tokens, which its energy per token divides by.
type ServerSide struct {
	Targets      []summary.ServerTarget
	OutputTokens int64
}

// SideOf is the server side of a result file's run.
func SideOf(s *summary.Summary) ServerSide {
	side := ServerSide{OutputTokens: s.Serving.OutputTokens}
	if s.Server != nil {
		side.Targets = s.Server.Targets
	}
	return side
}

// ServerFigures returns the server figures of two runs' server sections
// (each of figures that is a server figure, for each pair of targets the
// runs share), with their estimates at conf in each run. Targets pair by
// kind, engine and URL, or, when the URLs differ (a run against another
// host), by kind and engine where each run has one target of that kind
// and engine left. With one pair of a kind, a figure keeps its name;
// with several, each is named NAME@URL (the current run's URL). Nothing
// when either run has no server section.
func ServerFigures(cur, base *summary.Summary, figures []Figure, conf float64) (shown []Figure, curEst, baseEst map[string]Estimate) {
	shown, est := sideFigures([]ServerSide{SideOf(cur), SideOf(base)}, figures, conf)
	return shown, est[0], est[1]
}

// sideFigures returns the server figures of runs (newest first), as
// ServerFigures does for two: the newest run's targets paired with each
// previous run's, a figure named NAME@URL (the newest run's URL) when
// the newest run has several targets of its kind paired, and each run's
// estimates. Nothing when the newest run has no server section, or no
// previous run a target to pair with; a single run's targets all show.
func sideFigures(runs []ServerSide, figures []Figure, conf float64) (shown []Figure, est []map[string]Estimate) {
	est = make([]map[string]Estimate, len(runs))
	for i := range est {
		est[i] = map[string]Estimate{}
	}
	if len(runs) == 0 {
		return nil, est
	}
	newest := runs[0]
	// paired[i][j] is the target of run i+1 paired with the newest run's
	// target j, when there is one.
	paired := make([]map[int]summary.ServerTarget, len(runs)-1)
	anyPair := make([]bool, len(newest.Targets))
	for j := range anyPair {
		anyPair[j] = len(runs) == 1
	}
	for i, prev := range runs[1:] {
		paired[i] = map[int]summary.ServerTarget{}
		for _, p := range pairTargets(newest.Targets, prev.Targets) {
			j := p[0]
			paired[i][j], anyPair[j] = prev.Targets[p[1]], true
		}
	}
	perKind := map[string]int{}
	for j, t := range newest.Targets {
		if anyPair[j] {
			perKind[t.Kind]++
		}
	}
	for _, f := range figures {
		for j, t := range newest.Targets {
			if !anyPair[j] || !f.Server() || f.gpu() != (t.Kind == summary.TargetGPU) {
				continue
			}
			named := f
			if perKind[t.Kind] > 1 {
				named.Name = f.Name + "@" + t.URL
			}
			found := false
			if e, ok := serverEstimate(f, t, newest.OutputTokens, conf); ok {
				est[0][named.Name], found = e, true
			}
			for i, prev := range runs[1:] {
				pt, ok := paired[i][j]
				if !ok {
					continue
				}
				if e, ok := serverEstimate(f, pt, prev.OutputTokens, conf); ok {
					est[i+1][named.Name], found = e, true
				}
			}
			if found {
				shown = append(shown, named)
			}
		}
	}
	return shown, est
}

// WithServerFigures returns the figures llmrun compare judges: the
// client's among figures, then the server figures of the runs' server
// sections (ServerFigures) of those among figures, or, when byDefault
// (no --metric), of ServerHeadline. It adds their estimates to runs: the
// current run's, then the baseline's.
func WithServerFigures(figures []Figure, byDefault bool, cur, base *summary.Summary, runs []Run, conf float64) []Figure {
	return AddServerFigures(figures, byDefault, []ServerSide{SideOf(cur), SideOf(base)}, runs, conf)
}

// AddServerFigures returns the figures compare and trend judge: the
// client's among figures, then the server figures of the runs' server
// sides (sides[i] is runs[i]'s, newest first, paired as ServerFigures
// pairs them) of those among figures, or, when byDefault (no --metric),
// of ServerHeadline. It adds their estimates to each run's figures.
func AddServerFigures(figures []Figure, byDefault bool, sides []ServerSide, runs []Run, conf float64) []Figure {
	var client, server []Figure
	for _, f := range figures {
		if f.Server() {
			server = append(server, f)
		} else {
			client = append(client, f)
		}
	}
	if byDefault {
		server = ServerHeadline()
	}
	shown, est := sideFigures(sides, server, conf)
	for i := range runs {
		if runs[i].Figures == nil {
			runs[i].Figures = map[string]Estimate{}
		}
		maps.Copy(runs[i].Figures, est[i])
	}
	return append(client, shown...)
}

// pairTargets pairs the current run's targets with the baseline's, as
// indices into each: by kind, engine and URL first, then by kind and
// engine where one of each is left unpaired in both runs.
func pairTargets(cur, base []summary.ServerTarget) [][2]int {
	var pairs [][2]int
	usedCur, usedBase := make([]bool, len(cur)), make([]bool, len(base))
	for i, c := range cur {
		for j, b := range base {
			if !usedBase[j] && c.Kind == b.Kind && c.Engine == b.Engine && c.URL == b.URL {
				pairs, usedCur[i], usedBase[j] = append(pairs, [2]int{i, j}), true, true
				break
			}
		}
	}
	left := func(ts []summary.ServerTarget, used []bool, kind, engine string) []int {
		var out []int
		for i, t := range ts {
			if !used[i] && t.Kind == kind && t.Engine == engine {
				out = append(out, i)
			}
		}
		return out
	}
	for i, c := range cur {
		if usedCur[i] {
			continue
		}
		lc, lb := left(cur, usedCur, c.Kind, c.Engine), left(base, usedBase, c.Kind, c.Engine)
		if len(lc) == 1 && len(lb) == 1 {
			pairs, usedCur[i], usedBase[lb[0]] = append(pairs, [2]int{i, lb[0]}), true, true
		}
	}
	return pairs
}

// serverEstimate is figure f of target t of a run of outputTokens output
// tokens, with its interval where the section bounds it; false when the
// target lacks it.
func serverEstimate(f Figure, t summary.ServerTarget, outputTokens int64, conf float64) (Estimate, bool) {
	i := slices.IndexFunc(serverFigures, func(sf serverFigure) bool { return sf.Name == f.Name })
	if i < 0 {
		return Estimate{}, false
	}
	spec := serverFigures[i]
	figures := t.Figures
	if spec.Figure.gpu() {
		if t.GPUTotal == nil {
			return Estimate{}, false
		}
		figures = t.GPUTotal.Figures
	}
	w := figures[string(spec.source)]
	count := int64(0)
	if w.Count != nil {
		count = int64(*w.Count)
	}
	switch spec.stat {
	case "p50", "p99":
		q := map[string]float64{"p50": 50, "p99": 99}[spec.stat]
		sq, ok := w.Quantile(q / 100)
		if !ok {
			return Estimate{}, false
		}
		v := 1000 * sq.Value()
		switch {
		case count < samplesToBound(q/100, conf):
			return unbounded(v, count, percentileWhy(count, q, conf)), true
		case !sq.Bounded:
			return noInterval(v, count, fmt.Sprintf("the server's histogram gives its p%g, not the buckets around it that would bound it", q)), true
		case !sq.IsNumber():
			return noInterval(v, count, fmt.Sprintf("the server's p%g is known only to its histogram bucket: %s ms (the bucket and the bound its mean gives), so its change is no measurement", q, sq.Format(textfmt.SecondsAsMillis))), true
		}
		return noInterval(v, count, fmt.Sprintf("the server's p%g stands on its histogram's buckets, which compare does not turn into a confidence interval", q)), true
	case "max":
		if w.Max == nil {
			return Estimate{}, false
		}
		return noInterval(*w.Max, 0, "a maximum has no confidence interval"), true
	case "delta":
		if w.Delta == nil {
			return Estimate{}, false
		}
		return noInterval(*w.Delta, 0, "preemptions come in bursts when the KV cache fills: their count varies more than a count of independent events"), true
	case "mean":
		if w.Mean == nil {
			return Estimate{}, false
		}
		return noInterval(*w.Mean, 0, "a mean over time of readings that follow each other has no interval from the window's figures"), true
	case "per_token":
		if t.Energy == nil || outputTokens <= 0 {
			return Estimate{}, false
		}
		return noInterval(t.Energy.Joules/float64(outputTokens), outputTokens,
			"the energy is one reading of the whole window, without its spread"), true
	case "rate":
		return hitRateEstimate(t, conf)
	}
	return Estimate{}, false
}

// hitRateEstimate is the target's prefix-cache hit rate with Wilson's
// interval over the requests the server finished in the window: the
// tokens of one request hit or miss together, so its samples are the
// requests (as ITL's are the requests, not the gaps), and a share in
// [0, 1] per request varies no more than a hit or a miss would. Without
// the server's count of requests it has no interval.
func hitRateEstimate(t summary.ServerTarget, conf float64) (Estimate, bool) {
	if t.PrefixCacheHitRate == nil {
		return Estimate{}, false
	}
	p := *t.PrefixCacheHitRate
	req := t.Figures[string(engines.Requests)].Delta
	if req == nil || *req < 1 {
		return noInterval(p, 0, "the server does not count the requests its hit rate stands on"), true
	}
	n := int64(*req)
	lo, hi := wilsonRate(p, n, conf)
	return Estimate{Value: p, Lo: lo, Hi: hi, N: n}, true
}

// noInterval is an estimate of value whose interval what was stored
// cannot give, whatever its samples: its change is shown, not judged.
func noInterval(value float64, n int64, why string) Estimate {
	e := unbounded(value, n, why)
	e.NoInterval = true
	return e
}

// notJudgedWhy says why a comparison of prev and newest is not judged.
func notJudgedWhy(newest Estimate, prev []Estimate) string {
	if newest.NoInterval {
		return newest.Why
	}
	for _, e := range prev {
		if e.NoInterval {
			return e.Why
		}
	}
	return ""
}
