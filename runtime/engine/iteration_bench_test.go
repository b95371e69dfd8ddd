package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/executor"
)

// tenTokenStream is a streamed chat completion of 10 one-token chunks and
// a usage chunk, as an OpenAI-compatible server sends it.
func tenTokenStream() string {
	var sb strings.Builder
	for i := range 10 {
		fmt.Fprintf(&sb, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"%s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"},\"finish_reason\":null}]}\n\n", testModel, i)
	}
	fmt.Fprintf(&sb, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"%s\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":10,\"total_tokens\":19}}\n\n", testModel)
	sb.WriteString("data: [DONE]\n\n")
	return sb.String()
}

// BenchmarkIterationAllocs runs the iteration of the pacing issue (one
// llm.stream of a 10-token answer) on one VU against a local server that
// writes a prepared stream, and reports what each iteration allocates:
// the whole request path (the JS call, the request, HTTP, decoding, the
// result object, the samples), the server's net/http share included.
func BenchmarkIterationAllocs(b *testing.B) {
	srv := tenTokenServer(b)
	e := benchEngine(b, srv.URL+"/v1", `
import llm from 'llm';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 1000, duration: '6s', preAllocatedVUs: 1 } } };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'hello there' }], max_tokens: 10, ignore_eos: true });
}
`)
	v, err := e.newVU(context.Background(), 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := v.bind(&e.scenarios[0], metrics.NewTagSet(scenarioTags(&e.scenarios[0], e.options.Tags)), nil, e.live[0]); err != nil {
		b.Fatal(err)
	}
	var it executor.VU = v
	b.ReportAllocs()
	for b.Loop() {
		it.RunIteration(context.Background())
	}
	if got := sum(&Report{Snapshot: e.agg.Snapshot()}, "llm_requests", nil); got == 0 {
		b.Fatal("no request was counted")
	}
}
