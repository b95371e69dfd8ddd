package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/summary"
)

// sloKeys are the objectives --slo knows, with where each goes.
var sloKeys = map[string]func(*summary.SLO) *float64{
	"ttft_p99": func(s *summary.SLO) *float64 { return &s.TTFTP99 },
	"tpot_p99": func(s *summary.SLO) *float64 { return &s.TPOTP99 },
}

// parseSLO parses a serving-level objective as --slo takes it:
// comma-separated KEY=VALUE pairs, the keys ttft_p99 and tpot_p99, each
// value a positive number of milliseconds (500) or a duration (500ms,
// 1.5s). "ttft_p99=500,tpot_p99=50".
func parseSLO(s string) (summary.SLO, error) {
	var slo summary.SLO
	if strings.TrimSpace(s) == "" {
		return slo, errors.New("empty: want KEY=MS pairs such as ttft_p99=500,tpot_p99=50")
	}
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(s, ",") {
		key, value, ok := strings.Cut(pair, "=")
		key = strings.TrimSpace(key)
		field, known := sloKeys[key]
		switch {
		case !ok:
			return summary.SLO{}, fmt.Errorf("%q: want KEY=MS, as in ttft_p99=500", strings.TrimSpace(pair))
		case !known:
			return summary.SLO{}, fmt.Errorf("%q: unknown objective; want ttft_p99 or tpot_p99", key)
		case seen[key]:
			return summary.SLO{}, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		ms, err := parseMillis(strings.TrimSpace(value))
		if err != nil {
			return summary.SLO{}, fmt.Errorf("%s: %w", key, err)
		}
		*field(&slo) = ms
	}
	return slo, nil
}

// parseMillis parses a positive latency: a number of milliseconds, or a
// Go duration.
func parseMillis(v string) (float64, error) {
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
