package runner_test

import (
	"context"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/runner"
)

// Run runs a script against the built-in simulator, which it starts
// because the configuration names no server, and returns the outcome with
// the run's summary.
func ExampleRun() {
	script := `
import llm from 'llm';
export const options = { iterations: 3 };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4 });
}
`
	outcome := runner.Run(context.Background(), runner.Config{
		Engine:      engine.Config{ScriptPath: "example.js", Source: []byte(script), Seed: 1},
		NoPreflight: true,
		Quiet:       true,
		Stdout:      io.Discard,
		Stderr:      io.Discard,
	})
	fmt.Printf("%s: %d requests ok\n", outcome.Verdict, outcome.Summary.Serving.OK)
	// Output: passed: 3 requests ok
}
