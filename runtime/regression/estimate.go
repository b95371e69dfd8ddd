package regression

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// DefaultConfidence is the level of the confidence intervals compare and
// trend judge with, and that llm_run points store.
const DefaultConfidence = 0.99

// Estimate is one figure of a run with its confidence interval: the
// range that holds the figure's true value (the one an endless run of the
// same test would measure) with the run's confidence, given the samples
// behind it.
type Estimate struct {
	Value float64
	// Lo and Hi bound the figure; Lo is −Inf and Hi +Inf on a side that
	// the samples do not bound, and Why then says why.
	Lo, Hi float64
	// N is how many samples the figure stands on: requests (completed
	// ones for latencies and throughputs, all that ended for the success
	// rate); 0 when unknown.
	N int64
	// Why says why the interval is unbounded: too few samples (and how
	// many it would take), a maximum, or no interval stored.
	Why string
	// NoInterval says that what the figure was read from cannot bound it,
	// however many samples it stands on (a server's figure from its
	// window figures): its change is shown, not judged (NotJudged).
	NoInterval bool
}

// Bounded reports whether both sides of the interval are known.
func (e Estimate) Bounded() bool {
	return !math.IsInf(e.Lo, 0) && !math.IsInf(e.Hi, 0) && !math.IsNaN(e.Lo) && !math.IsNaN(e.Hi)
}

// unbounded is an estimate of value without an interval, because of why.
func unbounded(value float64, n int64, why string) Estimate {
	return Estimate{Value: value, Lo: math.Inf(-1), Hi: math.Inf(1), N: n, Why: why}
}

// minBatches is the fewest intervals of a run's timeline whose spread
// estimates the uncertainty of its throughput (the method of batch means);
// maxBatches the most it groups them into.
const (
	minBatches = 10
	maxBatches = 20
)

// Block is what Estimates reads of a run, or of one of its scenarios.
type Block struct {
	Serving summary.Serving
	// Metrics are the block's metrics: their histograms give the latency
	// intervals.
	Metrics map[string]summary.MetricSummary
	// Timeline is the run's, interval by interval; nil for a scenario,
	// whose throughputs then have their counting error only.
	Timeline []summary.TimelinePoint
	// ClosedLoop says that users wait for each answer before sending the
	// next (VU-based executors): the throughput is then set by the
	// latencies, not by an arrival process.
	ClosedLoop bool
}

// RunBlock is the whole run of a result as Estimates reads it.
func RunBlock(s *summary.Summary) Block {
	executors := make([]string, len(s.Meta.LoadShape))
	for i, sh := range s.Meta.LoadShape {
		executors[i] = sh.Executor
	}
	return Block{Serving: s.Serving, Metrics: s.Metrics, Timeline: s.Timeline, ClosedLoop: ClosedLoop(executors...)}
}

// ClosedLoop reports whether every executor named is closed-loop: its VUs
// send a request only when the last one answered (every executor but the
// arrival-rate ones and trace-replay, which starts requests at a trace's
// timestamps); false for none.
func ClosedLoop(executors ...string) bool {
	for _, e := range executors {
		if e == "" || strings.HasSuffix(e, "-arrival-rate") || e == "trace-replay" {
			return false
		}
	}
	return len(executors) > 0
}

// Estimates returns the figures of a serving block with their confidence
// intervals at conf, under the names of Lookup: the success rate, the
// throughputs, and each latency's mean, p50, p90, p95, p99 and max. A
// figure the block lacks is absent.
func Estimates(b Block, conf float64) map[string]Estimate {
	sv, ms := b.Serving, b.Metrics
	out := map[string]Estimate{}
	if sv.Requests > 0 {
		out["success_rate"] = ProportionEstimate(sv.OK, sv.Requests, conf)
	}
	if sv.DurationSeconds > 0 {
		// Arrivals at random make the count of completions vary as a
		// Poisson count does (coefficient of variation 1 per request);
		// a closed loop's varies as its requests' durations do.
		cv := 1.0
		if m, ok := ms["llm_e2e"]; b.ClosedLoop && ok && m.Histogram != nil {
			if st, err := m.Histogram.Stats(); err == nil && st.Mean() > 0 {
				cv = st.StdDev() / st.Mean()
			}
		}
		requests, tokens := timelineRates(b.Timeline)
		out["request_throughput"] = rateEstimate(sv.RequestThroughput, sv.OK, cv, requests, conf)
		out["output_throughput"] = rateEstimate(sv.OutputTokenThroughput, sv.OK, cv, tokens, conf)
		out["total_token_throughput"] = rateEstimate(sv.TotalTokenThroughput, sv.OK, cv, tokens, conf)
	}
	tpot := int64(0)
	if m, ok := ms["llm_tpot"]; ok && m.Histogram != nil {
		tpot = m.Histogram.Count
	}
	for metric, name := range latencyFields {
		m, ok := ms[metric]
		if !ok || m.Histogram == nil || m.Histogram.Count == 0 {
			continue
		}
		st, err := m.Histogram.Stats()
		if err != nil {
			continue
		}
		// ITL pools every gap of every request: the gaps of one request
		// move together, so its samples are the requests with gaps (those
		// TPOT counts), not the gaps.
		n := st.Count
		if metric == "llm_itl" && tpot > 0 {
			n = tpot
		}
		out[name+"_mean"] = meanEstimate(st, n, conf)
		for _, p := range []float64{50, 90, 95, 99} {
			out[name+"_p"+strconv.Itoa(int(p))] = percentileEstimate(st, p, n, conf)
		}
		out[name+"_max"] = unbounded(st.Max, n, "a maximum has no confidence interval: compare a percentile")
	}
	return out
}

// percentileEstimate is the p-th percentile of st with the interval
// between the order statistics that bound it (orderStatisticRanks), for n
// independent samples; with fewer samples (n below st.Count, as for ITL),
// the ranks are read as shares of the distribution.
func percentileEstimate(st *metrics.Stats, p float64, n int64, conf float64) Estimate {
	e := Estimate{Value: st.Percentile(p), Lo: math.Inf(-1), Hi: math.Inf(1), N: n}
	lo, hi := orderStatisticRanks(n, p/100, conf)
	if lo >= 1 {
		e.Lo = st.Percentile(100 * float64(lo) / float64(n))
	}
	if hi <= n {
		e.Hi = st.Percentile(100 * float64(hi) / float64(n))
	}
	if !e.Bounded() {
		e.Why = percentileWhy(n, p, conf)
	}
	return e
}

// percentileWhy says that n samples do not bound a p-th percentile at
// conf, and how many would.
func percentileWhy(n int64, p, conf float64) string {
	return fmt.Sprintf("%s cannot bound a p%g at %s confidence: it takes %d", textfmt.Count(n, "request"), p, percent(conf, false), samplesToBound(p/100, conf))
}

// meanEstimate is the mean of st with Student's t interval, for n
// independent samples: mean ± t(n−1) · sd / √n.
func meanEstimate(st *metrics.Stats, n int64, conf float64) Estimate {
	if n < 2 {
		return unbounded(st.Mean(), n, "one request cannot bound a mean")
	}
	half := tQuantile(1-(1-conf)/2, n-1) * st.StdDev() * math.Sqrt(float64(st.Count)/float64(st.Count-1)) / math.Sqrt(float64(n))
	return Estimate{Value: st.Mean(), Lo: st.Mean() - half, Hi: st.Mean() + half, N: n}
}

// rateEstimate is a throughput with its interval: the wider of the
// counting error of its completed requests — the count's relative
// standard error cv/√completed, where cv is 1 for Poisson arrivals and
// the requests' coefficient of variation of duration in a closed loop (a
// renewal process) — and, when the run's timeline has enough intervals,
// the spread of its throughput from interval to interval (the method of
// batch means over perInterval, the intervals' (count, seconds)). Bounds
// are multiplicative: value · exp(±half).
func rateEstimate(value float64, completed int64, cv float64, perInterval [][2]float64, conf float64) Estimate {
	if completed < 1 || value <= 0 {
		return unbounded(value, completed, "no completed request")
	}
	half := normalQuantile(1-(1-conf)/2) * cv / math.Sqrt(float64(completed))
	if bm, ok := batchMeans(perInterval, conf); ok {
		half = math.Max(half, bm)
	}
	return Estimate{Value: value, Lo: value * math.Exp(-half), Hi: value * math.Exp(half), N: completed}
}

// batchMeans groups consecutive intervals (count, seconds) into 10 to 20
// batches and returns the relative half-width of the interval of their
// mean rate: t(B−1) · sd(batch rates) / √B / mean rate. ok is false with
// fewer than minBatches intervals or no count.
func batchMeans(perInterval [][2]float64, conf float64) (half float64, ok bool) {
	n := len(perInterval)
	if n < minBatches {
		return 0, false
	}
	b := min(n, maxBatches)
	rates := make([]float64, b)
	var count, secs float64
	for j := range b {
		var c, s float64
		for _, iv := range perInterval[j*n/b : (j+1)*n/b] {
			c, s = c+iv[0], s+iv[1]
		}
		if s <= 0 {
			return 0, false
		}
		rates[j] = c / s
		count, secs = count+c, secs+s
	}
	if count <= 0 {
		return 0, false
	}
	mean := count / secs
	var ss float64
	for _, r := range rates {
		ss += (r - mean) * (r - mean)
	}
	sd := math.Sqrt(ss / float64(b-1))
	return tQuantile(1-(1-conf)/2, int64(b-1)) * sd / math.Sqrt(float64(b)) / mean, true
}

// timelineRates returns each timeline interval's completed requests and
// output tokens, with its length: (count, seconds).
func timelineRates(timeline []summary.TimelinePoint) (requests, tokens [][2]float64) {
	for _, p := range timeline {
		requests = append(requests, [2]float64{float64(p.Requests - p.Failed), p.Seconds})
		tokens = append(tokens, [2]float64{float64(p.OutputTokens), p.Seconds})
	}
	return requests, tokens
}

// The fields of an llm_run point that carry a figure's interval and the
// interval's level: F_ci_lo, F_ci_hi (absent on a side the samples do not
// bound), L_count (the samples behind latency L's figures) and ci_level.
const (
	ciLoSuffix = "_ci_lo"
	ciHiSuffix = "_ci_hi"
	countField = "_count"
	levelField = "ci_level"
)

// IntervalFields returns the numeric fields that store the estimates'
// intervals in an llm_run point, beside the figures' values (stored under
// their names): each figure's bounds under NAME_ci_lo and NAME_ci_hi where
// bounded, each latency's sample count under L_count, and the level conf
// under ci_level.
func IntervalFields(estimates map[string]Estimate, conf float64) map[string]float64 {
	f := map[string]float64{levelField: conf}
	for name, e := range estimates {
		if !math.IsInf(e.Lo, 0) && !math.IsNaN(e.Lo) {
			f[name+ciLoSuffix] = e.Lo
		}
		if !math.IsInf(e.Hi, 0) && !math.IsNaN(e.Hi) {
			f[name+ciHiSuffix] = e.Hi
		}
		if l, stat, ok := strings.Cut(name, "_"); ok && stat == "mean" && isLatency(l) {
			f[l+countField] = float64(e.N)
		}
	}
	return f
}

// FromFields reads the figures of an llm_run point's fields: values under
// their names, intervals as IntervalFields stored them, with their intervals at the
// stored level (0 when the fields hold none: a run stored by an llmrun
// before intervals were kept, whose figures then have unbounded ones).
func FromFields(fields map[string]float64) (figures map[string]Estimate, conf float64) {
	conf = fields[levelField]
	figures = map[string]Estimate{}
	for name, v := range fields {
		if _, ok := Lookup(name); !ok {
			continue
		}
		e := unbounded(v, sampleCount(fields, name), "stored without a confidence interval")
		if lo, ok := fields[name+ciLoSuffix]; ok {
			e.Lo = lo
		}
		if hi, ok := fields[name+ciHiSuffix]; ok {
			e.Hi = hi
		}
		switch {
		case e.Bounded():
			e.Why = ""
		case conf > 0 && strings.HasSuffix(name, "_max"):
			e.Why = "a maximum has no confidence interval: compare a percentile"
		case conf > 0:
			e.Why = fmt.Sprintf("%s did not bound it at %s confidence", textfmt.Count(e.N, "request"), percent(conf, false))
			if _, stat, _ := strings.Cut(name, "_"); strings.HasPrefix(stat, "p") {
				if p, err := strconv.ParseFloat(stat[1:], 64); err == nil {
					e.Why = percentileWhy(e.N, p, conf)
				}
			}
		}
		figures[name] = e
	}
	return figures, conf
}

// sampleCount is the samples behind a stored figure: its latency's count,
// the requests for the success rate, the completed ones otherwise.
func sampleCount(fields map[string]float64, name string) int64 {
	if l, _, ok := strings.Cut(name, "_"); ok && isLatency(l) {
		if l == "itl" {
			l = "tpot" // ITL stands on the requests with gaps
		}
		return int64(fields[l+countField])
	}
	if name == "success_rate" {
		return int64(fields["requests"])
	}
	return int64(fields["completed"])
}

// isLatency reports whether l names a latency of the llm_run fields.
func isLatency(l string) bool {
	for _, name := range latencyFields {
		if name == l {
			return true
		}
	}
	return false
}

// ProportionEstimate is a share, successes of n, with its Wilson score
// interval at conf: the interval the success rate of Estimates has.
func ProportionEstimate(successes, n int64, conf float64) Estimate {
	if n <= 0 {
		return unbounded(0, 0, "no request ended")
	}
	lo, hi := wilson(successes, n, conf)
	return Estimate{Value: float64(successes) / float64(n), Lo: lo, Hi: hi, N: n}
}
