package engine

import (
	"runtime/metrics"
	"testing"

	"github.com/dop251/goja"
	"github.com/llmrun/llmrun/modules"
)

// forcedCycles is a test module whose default export returns how many
// garbage collections the process has been asked for so far.
type forcedCycles struct{}

func (forcedCycles) NewInstance(vu modules.VU) (modules.Instance, error) {
	rt := vu.Runtime()
	f := modules.Function(rt, 0, func(goja.FunctionCall) goja.Value {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return rt.ToValue(s[0].Value.Uint64())
	})
	return forcedInstance{f}, nil
}

type forcedInstance struct{ f *goja.Object }

func (i forcedInstance) Exports() *goja.Object { return i.f }

// TestCollectsBeforeTheWindow: what initialisation and setup left is
// collected after setup and before the first iteration, not in the
// measured window.
func TestCollectsBeforeTheWindow(t *testing.T) {
	cfg := testConfig(t, `
import forced from 'forced';
import { Gauge } from 'metrics';
const collected = new Gauge('collected_before_start');
export const options = { vus: 1, iterations: 1 };
export function setup() { return forced(); }
export default function (atSetup) { collected.add(forced() - atSetup); }
`, nil, nil)
	if err := cfg.Modules.Register("forced", forcedCycles{}); err != nil {
		t.Fatal(err)
	}
	rep := mustRun(t, load(t, cfg))
	st := rep.Snapshot.Stats("collected_before_start", nil)
	if st == nil || st.Count != 1 || st.Last < 1 {
		t.Fatalf("forced collections between setup and the first iteration: %+v, want one sample of at least 1", st)
	}
}
