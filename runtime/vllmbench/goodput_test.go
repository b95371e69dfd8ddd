package vllmbench

import (
	"testing"

	"github.com/llmrun/llmrun/runtime/summary"
)

// request_goodput is the run's own count of good requests (the summary's
// serving goodput, which the runner counted from every record) over the
// run's duration: the result does not judge the requests again.
func TestRequestGoodputIsTheRunsCount(t *testing.T) {
	bounds := summary.GoodputBounds{TTFT: 10}
	o := detailedOptions()
	o.Goodput = bounds
	for _, c := range []struct {
		name    string
		goodput *summary.Goodput
		want    any
	}{
		{"counted", &summary.Goodput{Bounds: bounds, Good: 1, Requests: 4}, 1 / 0.05},
		{"none good", &summary.Goodput{Bounds: bounds, Good: 0, Requests: 4}, 0.0},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := detailedRun(detailedRequests())
			run.Summary.Serving.Goodput = c.goodput
			if got, _ := NewResult(o, run).Get("request_goodput"); got != c.want {
				t.Errorf("request_goodput = %v, want %v (%d good in %g s)", got, c.want, c.goodput.Good, run.Summary.Serving.DurationSeconds)
			}
		})
	}
	if got, _ := NewResult(detailedOptions(), detailedRun(detailedRequests())).Get("request_goodput"); got != nil {
		t.Errorf("request_goodput without --goodput = %v, want null", got)
	}
}
