package summary

import (
	"fmt"
	"strings"
	"time"
)

// GoodputBounds are per-request latency bounds, in milliseconds, that a
// request must all meet to be good (vLLM's --goodput): a bound of 0 is
// not given.
type GoodputBounds struct {
	TTFT float64 `json:"ttft_ms,omitempty"`
	TPOT float64 `json:"tpot_ms,omitempty"`
	E2E  float64 `json:"e2e_ms,omitempty"`
}

// IsZero says that no bound is given.
func (b GoodputBounds) IsZero() bool { return b == GoodputBounds{} }

// Good says whether a completed request with these latencies (ms) meets
// every bound given. As in vLLM, a request of one output token has a TPOT
// of 0, which meets any TPOT bound.
func (b GoodputBounds) Good(ttft, tpot, e2e float64) bool {
	return (b.TTFT == 0 || ttft <= b.TTFT) && (b.TPOT == 0 || tpot <= b.TPOT) && (b.E2E == 0 || e2e <= b.E2E)
}

// String is the bounds as the console prints them: "ttft ≤ 500 ms, tpot ≤ 50 ms".
func (b GoodputBounds) String() string {
	var parts []string
	for _, x := range []struct {
		name string
		ms   float64
	}{{"ttft", b.TTFT}, {"tpot", b.TPOT}, {"e2e", b.E2E}} {
		if x.ms > 0 {
			parts = append(parts, fmt.Sprintf("%s ≤ %g ms", x.name, x.ms))
		}
	}
	return strings.Join(parts, ", ")
}

// Goodput is how many requests met the run's per-request bounds: vLLM's
// request_goodput is Good over the block's duration.
type Goodput struct {
	Bounds GoodputBounds `json:"bounds"`
	// Good counts the completed requests that met every bound; Requests
	// the requests that ended (completed or failed), of which a failed
	// one is never good.
	Good     int64 `json:"good_requests"`
	Requests int64 `json:"requests"`
	// RequestGoodput is Good per second of the block's duration.
	RequestGoodput float64 `json:"request_goodput"`
}

// SetGoodput sets the goodput of the serving block from its counts, over
// the block's duration, and its headline's request_goodput; bounds that
// are zero set none.
func (s *Serving) SetGoodput(bounds GoodputBounds, good, requests int64) {
	if bounds.IsZero() {
		s.Goodput = nil
		delete(s.Headline, "request_goodput")
		return
	}
	s.Goodput = &Goodput{Bounds: bounds, Good: good, Requests: requests}
	s.Goodput.finish(seconds(s.DurationSeconds))
	if s.Headline != nil {
		s.Headline["request_goodput"] = s.Goodput.RequestGoodput
	}
}

func (g *Goodput) finish(dur time.Duration) {
	if g == nil {
		return
	}
	if secs := dur.Seconds(); secs > 0 {
		g.RequestGoodput = float64(g.Good) / secs
	}
}

// addGoodput adds b's goodput counts to sum's; the bounds are the first
// given (results merged are of one test).
func addGoodput(sum *Goodput, b *Goodput) *Goodput {
	if b == nil {
		return sum
	}
	if sum == nil {
		sum = &Goodput{Bounds: b.Bounds}
	}
	sum.Good += b.Good
	sum.Requests += b.Requests
	return sum
}
