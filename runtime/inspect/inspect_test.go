package inspect_test

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/inspect"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/runner"
)

// An inspection gives each scenario resolved and the whole test's VUs and
// longest duration; its table names a chained scenario's predecessor.
func TestOf(t *testing.T) {
	t.Parallel()
	cfg := engine.Config{ScriptPath: "plan.js", Source: []byte(`
export const options = { scenarios: {
  warm: { executor: 'constant-vus', vus: 2, duration: '10s', gracefulStop: '0s' },
  load: { executor: 'shared-iterations', vus: 3, iterations: 9, maxDuration: '20s', gracefulStop: '0s', startAfter: 'warm' },
} };
export default function () {}
`)}
	llmconfig.Placeholder(&cfg.LLM)
	e, _, err := runner.Load(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := inspect.Of("plan.js", e)
	if len(in.Scenarios) != 2 || in.MaxVUs != 5 || in.MaxDurationS != 30 || in.ScriptSHA256 == "" || in.HandleSummary {
		t.Fatalf("inspection %+v", in)
	}
	load := in.Scenarios[1]
	if load.Name != "load" || load.Executor != "shared-iterations" || load.StartAfter != "warm" || load.MaxVUs != 3 || load.MaxDuration != "20s" {
		t.Errorf("scenario %+v", load)
	}
	var out strings.Builder
	if err := in.Render(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"script: plan.js", "2 scenarios, up to 5 VUs, at most 30s", "after warm"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rendered without %q:\n%s", want, out.String())
		}
	}
}
