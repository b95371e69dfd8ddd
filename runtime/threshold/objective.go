package threshold

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Objective is a latency objective: a bound, in milliseconds, that one of
// the requests' latencies must not exceed, either at a percentile of the
// run's requests (--slo ttft_p99=500: the threshold p(99)<=500 on
// llm_ttft) or in each request (--goodput ttft:500: a request meeting all
// of them is good). Metric is the latency's metric, as thresholds name
// it: llm_ttft, llm_tpot or llm_e2e.
type Objective struct {
	Metric string
	// Percentile is N of p(N); 0 when each request must meet Bound.
	Percentile float64
	Bound      float64
}

// Objectives is one spelling of a list of latency objectives, the text a
// flag takes and its script option: pairs of a key and a latency, such as
// ttft_p99=500 or ttft:500, each latency a positive number of
// milliseconds (500) or a duration (500ms, 1.5s) (ParseLatency); the
// option is an object of the same keys ({ ttft_p99: 500 }) or the text.
type Objectives struct {
	// Keys are the keys known, each with the objective it names (its
	// Bound unset). Two keys of one objective are aliases: e2e and e2el.
	Keys map[string]Objective
	// Sep separates a key from its latency: "=" or ":".
	Sep string
	// Spaces says that spaces separate pairs as commas do and that empty
	// pairs are skipped (vLLM's ttft:500 tpot:50); otherwise pairs are
	// separated by commas, spaces around keys and latencies are allowed,
	// and an empty pair is an error.
	Spaces bool
	// What a key names, in errors: "objective", "metric".
	Noun string
	// The errors' wants: of an empty text, of a pair without Sep, of the
	// known keys, of an option that is neither text nor object.
	WantPairs, WantPair, WantKeys, WantObject string
}

// SLO is the spelling of --slo and options.slo: percentile objectives,
// "ttft_p99=500,tpot_p99=50".
var SLO = Objectives{
	Keys: map[string]Objective{
		"ttft_p99": {Metric: "llm_ttft", Percentile: 99},
		"tpot_p99": {Metric: "llm_tpot", Percentile: 99},
	},
	Sep: "=", Noun: "objective",
	WantPairs:  "want KEY=MS pairs such as ttft_p99=500,tpot_p99=50",
	WantPair:   "want KEY=MS, as in ttft_p99=500",
	WantKeys:   "want ttft_p99 or tpot_p99",
	WantObject: "want an object such as { ttft_p99: 2000, tpot_p99: 50 } (milliseconds)",
}

// Goodput is the spelling of --goodput and options.goodput, vLLM's:
// per-request bounds, "ttft:500 tpot:50 e2el:10000" (e2el is vLLM's name
// of e2e), commas or spaces between pairs.
var Goodput = Objectives{
	Keys: map[string]Objective{
		"ttft": {Metric: "llm_ttft"},
		"tpot": {Metric: "llm_tpot"},
		"e2e":  {Metric: "llm_e2e"},
		"e2el": {Metric: "llm_e2e"},
	},
	Sep: ":", Spaces: true, Noun: "metric",
	WantPairs:  goodputWant,
	WantPair:   goodputWant,
	WantKeys:   "want ttft, tpot, e2e or e2el",
	WantObject: "want an object such as { ttft: 500, tpot: 50, e2e: 10000 } (milliseconds)",
}

const goodputWant = "want KEY:MS pairs such as ttft:500,tpot:50,e2el:10000 (keys ttft, tpot, e2e or e2el)"

// Parse parses the text of the objectives, in the order written. Each
// error quotes the pair, or names the key, that is wrong; an objective
// given twice (under either of its keys) is an error.
func (g Objectives) Parse(text string) ([]Objective, error) {
	var pairs []string
	if g.Spaces {
		pairs = strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' })
	} else if strings.TrimSpace(text) != "" {
		pairs = strings.Split(text, ",")
	}
	if len(pairs) == 0 {
		return nil, errors.New("empty: " + g.WantPairs)
	}
	out := make([]Objective, 0, len(pairs))
	for _, pair := range pairs {
		key, value, ok := strings.Cut(pair, g.Sep)
		if !g.Spaces {
			pair, key, value = strings.TrimSpace(pair), strings.TrimSpace(key), strings.TrimSpace(value)
		}
		o, known := g.Keys[key]
		switch {
		case !ok:
			return nil, fmt.Errorf("%q: %s", pair, g.WantPair)
		case !known:
			return nil, fmt.Errorf("%q: unknown %s; %s", key, g.Noun, g.WantKeys)
		case slices.ContainsFunc(out, o.same):
			return nil, fmt.Errorf("%s given twice", key)
		}
		ms, err := ParseLatency(value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		o.Bound = ms
		out = append(out, o)
	}
	return out, nil
}

// ParseOption parses the script's option of the objectives: an object of
// the keys, each a number of milliseconds or a duration string (null
// skipped), in the order of its keys, or the text Parse takes.
func (g Objectives) ParseOption(raw json.RawMessage) ([]Objective, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return g.Parse(text)
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(raw, &values); err != nil {
		return nil, errors.New(g.WantObject)
	}
	var out []Objective
	for _, key := range slices.Sorted(maps.Keys(values)) {
		o, known := g.Keys[key]
		if !known {
			return nil, fmt.Errorf("%s: unknown %s; %s", key, g.Noun, g.WantKeys)
		}
		var v any
		if err := json.Unmarshal(values[key], &v); err != nil || v == nil {
			continue
		}
		ms, err := ParseLatency(strings.TrimSpace(fmt.Sprint(v)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		o.Bound = ms
		out = append(out, o)
	}
	return out, nil
}

// same says whether o and p are one objective, whatever their bounds.
func (o Objective) same(p Objective) bool {
	return o.Metric == p.Metric && o.Percentile == p.Percentile
}

// ParseLatency parses a positive latency, in milliseconds: a number of
// milliseconds (500, 42.5, 1e3), or a Go duration (500ms, 1.5s).
func ParseLatency(v string) (float64, error) {
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil {
		d, derr := time.ParseDuration(v)
		if derr != nil {
			return 0, fmt.Errorf("%q: want milliseconds (500) or a duration (500ms, 1.5s)", v)
		}
		ms = float64(d) / float64(time.Millisecond)
	}
	if !(ms > 0) || math.IsInf(ms, 0) {
		return 0, fmt.Errorf("%q: want a positive latency", v)
	}
	return ms, nil
}
