package engines_test

import (
	"fmt"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
)

// A target's exposition, parsed by the Prometheus project's parser, tells
// which engine it is; the engine says where each figure is.
func ExampleDetect() {
	const exposition = `# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="m"} 0.25
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} 3
`
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		fmt.Println(err)
		return
	}
	e := engines.Detect(families)
	fmt.Println(e.Title)
	for _, f := range []engines.Figure{engines.KVCacheUsage, engines.Waiting, engines.TTFT} {
		sel, ok := e.Lookup(families, f, map[string]string{e.ModelLabel: "m"})
		if !ok {
			fmt.Printf("%s: not exposed\n", f)
			continue
		}
		v, _ := sel.Value()
		fmt.Printf("%s: %v from %s\n", f, v, sel.Source.Name)
	}
	// Output:
	// vLLM
	// kv_cache_usage: 0.25 from vllm:gpu_cache_usage_perc
	// waiting: 3 from vllm:num_requests_waiting
	// ttft: not exposed
}
