package window_test

import (
	"fmt"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/window"
)

// A live view counts each second's requests into an Aggregate, shows it,
// merges it into the run's and starts the next second afresh. Percentiles
// are within 0.1 % (101.055 for 101) and the extremes exact, as in the
// summary.
func ExampleAggregate() {
	var run, second window.Aggregate
	for _, ttft := range []float64{120, 95, 310, 101} {
		second.Add(&llm.Record{OK: true, TTFT: ttft, TPOT: 12, E2E: ttft + 900, PromptTokens: 500})
	}
	second.Add(&llm.Record{ErrorClass: "timeout", E2E: 30_000})
	fmt.Printf("this second: %d requests, %d failed %v, %d prompt tokens, TTFT p50 %g ms\n",
		second.Requests, second.Failed, second.Errors, second.PromptTokens, second.TTFT.Percentile(50))

	run.Merge(&second)
	second.Reset()
	second.Add(&llm.Record{OK: true, TTFT: 480, E2E: 1600})
	run.Merge(&second)
	fmt.Printf("the run: %d requests, TTFT p99 %g ms, E2E max %g ms\n", run.Requests, run.TTFT.Percentile(99), run.E2E.Max())
	// Output:
	// this second: 5 requests, 1 failed map[timeout:1], 2000 prompt tokens, TTFT p50 101.055 ms
	// the run: 6 requests, TTFT p99 480 ms, E2E max 1600 ms
}
