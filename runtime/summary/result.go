package summary

// The sections of the result file that other packages compute: the
// timeline (runtime/timeline) and the capacity verdict (runtime/capacity).
// They are defined here, with the rest of the file's schema, because they
// are part of the document: versioned with it (SchemaVersion), read back
// and merged by this package, and described field by field in
// docs/results.md. The packages that compute them import this one.

// TimelinePoint is one interval of the run (every second, or wider for
// long runs so that a run has at most MaxTimelinePoints): what the "over
// time" charts draw.
type TimelinePoint struct {
	// T is the interval's end, in seconds since the run's start.
	T float64 `json:"t"`
	// Seconds is the interval's length.
	Seconds float64 `json:"seconds"`
	// Requests and Failed ended in the interval. OutputTokens arrived in
	// it: one per token-bearing chunk of a stream as it arrived, and,
	// when a request completed, what its count (the server's usage) has
	// beyond its chunks; tokens of requests that then failed or were cut
	// count too. In a version-2 file (Summary.SchemaVersion), they are
	// the output tokens of the requests completed in the interval.
	Requests     int64 `json:"requests"`
	Failed       int64 `json:"failed"`
	OutputTokens int64 `json:"output_tokens"`
	// ActiveVUs is the number of VUs running an iteration at the
	// interval's end; InFlight the LLM requests in flight then.
	ActiveVUs int64 `json:"active_vus"`
	InFlight  int64 `json:"in_flight"`
	// TTFT and E2E percentiles of the interval's completed requests, ms;
	// 0 when none completed.
	TTFTP50 float64 `json:"ttft_p50_ms"`
	TTFTP99 float64 `json:"ttft_p99_ms"`
	E2EP50  float64 `json:"e2e_p50_ms"`
	E2EP99  float64 `json:"e2e_p99_ms"`
}

// MaxTimelinePoints bounds a run's timeline.
const MaxTimelinePoints = 600

// SLO is a serving-level objective on latency percentiles, in ms; a zero
// field is no objective.
type SLO struct {
	TTFTP99 float64 `json:"ttft_p99_ms,omitempty"`
	TPOTP99 float64 `json:"tpot_p99_ms,omitempty"`
}

// Capacity is the verdict of a sweep: the levels (concurrency or rate)
// with their figures, where the server saturates, and the highest level
// that meets the SLO.
type Capacity struct {
	// Variable is what the levels vary: "concurrency" or "rate".
	Variable string          `json:"variable"`
	Levels   []CapacityLevel `json:"levels"`
	SLO      SLO             `json:"slo"`
	// MinGain is the relative growth of output throughput between levels
	// that still counts as growing (0.1: 10 %).
	MinGain float64 `json:"min_gain"`
	// Saturation is the level beyond which throughput stops growing
	// while latency keeps climbing; nil when the sweep did not reach it.
	Saturation *CapacityLevel `json:"saturation,omitempty"`
	// MaxWithinSLO is the highest level whose latencies and success
	// rate meet the SLO; nil when none does or there is no SLO.
	// In a search of several scenarios it is the level's total over
	// them (Scenario names them all, joined by " + "): throughputs
	// summed, the lowest success rate and the highest percentiles of
	// any of them.
	MaxWithinSLO *CapacityLevel `json:"max_within_slo,omitempty"`
	// Method says in words how the two were found.
	Method string `json:"method"`
	// Search is the capacity search that ran the levels
	// (options.capacity.search); nil for a sweep.
	Search *CapacitySearch `json:"search,omitempty"`
}

// CapacitySearch is what a capacity search found: the bracket that holds
// the capacity, every level it tried, and why it stopped.
type CapacitySearch struct {
	// Variable is what the levels count: "rate" (requests per second, of
	// all scenarios together) or "concurrency" (VUs, of all together).
	Variable string `json:"variable"`
	// Low is the highest level that met the SLO, High the lowest above
	// it that did not; 0 when there is none. Estimate is the capacity
	// read from them: their geometric mean, or Low alone.
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	Estimate float64 `json:"estimate"`
	// Width is the relative half-width the search stops at, Confidence
	// the level of the intervals it judged by.
	Width      float64 `json:"width"`
	Confidence float64 `json:"confidence"`
	// GoodputShare is the share of good requests a level must have
	// (with goodput bounds); 0 when none is asked.
	GoodputShare float64 `json:"goodput_share,omitempty"`
	// Levels are the levels tried, in order.
	Levels []SearchLevel `json:"levels"`
	// Stop says in words why the search stopped.
	Stop string `json:"stop"`
	// Seconds is the time the levels ran, drains included.
	Seconds float64 `json:"seconds"`
}

// VerdictOf is the search's verdict of level ("met", "missed" or
// "inconclusive"), "" when it tried no such level.
func (s *CapacitySearch) VerdictOf(level float64) string {
	for _, l := range s.Levels {
		if l.Level == level {
			return l.Verdict
		}
	}
	return ""
}

// SearchLevel is one level a capacity search tried, and its verdict.
type SearchLevel struct {
	Level    float64 `json:"level"`
	Seconds  float64 `json:"seconds"`
	Requests int64   `json:"requests"`
	// Verdict is "met", "missed" or "inconclusive" (counted as not met).
	Verdict string `json:"verdict"`
	// Figure names the figure that decided, with its scenario, without
	// the level, in a mixed workload ("chat: ttft_p99", not
	// "chat@83.36: ttft_p99"); Value is its measured value, Lo and Hi
	// its confidence interval (absent on a side the samples do not
	// bound), Bound the SLO's bound on it. Why says why an inconclusive
	// figure's interval is open.
	Figure string   `json:"figure,omitempty"`
	Value  float64  `json:"value"`
	Lo     *float64 `json:"lo,omitempty"`
	Hi     *float64 `json:"hi,omitempty"`
	Bound  float64  `json:"bound"`
	Why    string   `json:"why,omitempty"`
	// Extended says that the level ran longer than one step because it
	// was inconclusive after the first.
	Extended bool `json:"extended,omitempty"`
}

// CapacityLevel is one level of a sweep: a scenario's figures.
type CapacityLevel struct {
	Scenario         string  `json:"scenario"`
	Level            float64 `json:"level"`
	RequestRate      float64 `json:"request_throughput"`
	OutputThroughput float64 `json:"output_throughput"`
	SuccessRate      float64 `json:"success_rate"`
	TTFTP50          float64 `json:"ttft_p50_ms"`
	TTFTP99          float64 `json:"ttft_p99_ms"`
	TPOTP50          float64 `json:"tpot_p50_ms"`
	TPOTP99          float64 `json:"tpot_p99_ms"`
	MeetsSLO         bool    `json:"meets_slo"`
}
