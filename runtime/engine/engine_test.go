package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/metrics/metricsjs"
	"github.com/llmrun/llmrun/modules/standard"
	"github.com/llmrun/llmrun/runtime/js"
)

const testModel = "test-model"

// startSim starts a fast simulator: about 1 ms per prefill and per decode
// step, unless decode overrides the decode step.
func startSim(t *testing.T, decode time.Duration) *llmsim.Running {
	t.Helper()
	cfg := llmsimtest.Fast()
	if decode > 0 {
		cfg.DecodeBase = decode
	}
	return llmsimtest.Start(t, cfg)
}

// logBuffer collects the script's console output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testConfig writes src to a temporary script.js and returns a Config for
// it, aimed at sim (when not nil), with console output going to logs.
func testConfig(t *testing.T, src string, sim *llmsim.Running, logs *logBuffer) Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.js")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{ScriptPath: path, Seed: 1, LLM: llm.Config{Model: testModel}}
	if sim != nil {
		cfg.LLM.BaseURL = sim.URL() + "/v1"
	}
	if logs != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	} else {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Paths = NewPaths(cfg)
	cfg.Modules = standard.Modules(standard.Options{Seed: 1, Paths: cfg.Paths})
	return cfg
}

// load loads cfg and fails the test on error.
func load(t *testing.T, cfg Config) *Engine {
	t.Helper()
	e, err := Load(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return e
}

// runBounded runs e with a deadline so that a hung engine fails the test
// instead of hanging it.
func runBounded(t *testing.T, ctx context.Context, e *Engine) (*Report, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	rep, err := e.Run(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run did not end within 60s")
	}
	return rep, err
}

// mustRun runs e and fails the test on error.
func mustRun(t *testing.T, e *Engine) *Report {
	t.Helper()
	rep, err := runBounded(t, t.Context(), e)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Interrupted {
		t.Fatal("Report.Interrupted is set for a run that was not stopped")
	}
	return rep
}

func tags(kv ...string) *metrics.TagSet {
	m := make(map[string]string)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return metrics.NewTagSet(m)
}

// sum is the sum of a metric's values among series that carry filter; 0
// when there are none.
func sum(rep *Report, name string, filter *metrics.TagSet) float64 {
	if st := rep.Snapshot.Stats(name, filter); st != nil {
		return st.Sum
	}
	return 0
}

// count is the number of samples of a metric among series that carry
// filter.
func count(rep *Report, name string, filter *metrics.TagSet) int64 {
	if st := rep.Snapshot.Stats(name, filter); st != nil {
		return st.Count
	}
	return 0
}

func TestSetupDataReachesIterationsAndTeardown(t *testing.T) {
	sim := startSim(t, 0)
	logs := &logBuffer{}
	cfg := testConfig(t, `
import llm from 'llm';
import { Counter } from 'metrics';
const fromData = new Counter('from_data');
export const options = { vus: 2, iterations: 6 };
export function setup() {
  const r = llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 7, ignore_eos: true });
  if (!r.ok) throw new Error('setup request failed: ' + r.error);
  return { n: r.outputTokens, label: 'from-setup', nested: { list: [1, 2, 3] } };
}
export default function (data) {
  fromData.add(data.n, { label: data.label, phase: 'iteration' });
  fromData.add(data.nested.list.length, { phase: 'nested' });
}
export function teardown(data) {
  fromData.add(data.n * 100, { label: data.label, phase: 'teardown' });
  console.log('teardown got', data.n, data.label);
}
`, sim, logs)
	rep := mustRun(t, load(t, cfg))

	if got := sum(rep, "iterations", nil); got != 6 {
		t.Errorf("iterations = %v, want 6", got)
	}
	// setup()'s llm request is a request like any other, tagged as setup's.
	if got := count(rep, "llm_requests", tags("scenario", "setup", "model", testModel)); got != 1 {
		t.Errorf("llm_requests{scenario:setup} has %d samples, want 1", got)
	}
	tests := []struct {
		filter *metrics.TagSet
		count  int64
		sum    float64
	}{
		{tags("phase", "iteration", "label", "from-setup", "scenario", "default"), 6, 6 * 7},
		{tags("phase", "nested", "scenario", "default"), 6, 6 * 3},
		{tags("phase", "teardown", "label", "from-setup", "scenario", "teardown"), 1, 700},
	}
	for _, tc := range tests {
		st := rep.Snapshot.Stats("from_data", tc.filter)
		if st == nil || st.Count != tc.count || st.Sum != tc.sum {
			t.Errorf("from_data{%s} = %+v, want count %d, sum %v", tc.filter.Key(), st, tc.count, tc.sum)
		}
	}
	if out := logs.String(); !strings.Contains(out, "teardown got 7 from-setup") {
		t.Errorf("console output lacks teardown's line:\n%s", out)
	}
}

// Each VU passes setup's data with its runtime's own JSON.parse, taken
// before the init code could replace the global JSON; a script without
// setup still has its JSON.
func TestSetupDataWithAReplacedJSON(t *testing.T) {
	rep := mustRun(t, load(t, testConfig(t, `
import { Counter } from 'metrics';
const fromData = new Counter('from_data');
globalThis.JSON = { parse() { throw new Error('not the runtime JSON.parse'); } };
export const options = { vus: 3, iterations: 6 };
export function setup() { return { n: 5 }; }
export default function (data) { fromData.add(data.n); }
`, nil, nil)))
	if got := sum(rep, "from_data", nil); got != 6*5 {
		t.Errorf("from_data = %v, want 30: %v", got, rep.ScriptErrors)
	}
	rep = mustRun(t, load(t, testConfig(t, `
import { Counter } from 'metrics';
const parsed = new Counter('parsed');
export const options = { vus: 2, iterations: 4 };
export default function (data) { parsed.add(JSON.parse('{"n":2}').n + (data === undefined ? 0 : 100)); }
`, nil, nil)))
	if got := sum(rep, "parsed", nil); got != 4*2 {
		t.Errorf("parsed = %v, want 8: %v", got, rep.ScriptErrors)
	}
}

func TestScenariosRunConcurrentlyWithTheirOwnExecTagsAndEnv(t *testing.T) {
	sim := startSim(t, 0)
	cfg := testConfig(t, `
import llm from 'llm';
import { sleep } from 'llmrun';
import { Counter, Gauge } from 'metrics';
const calls = new Counter('calls');
const firstStart = new Gauge('first_start');
const lastEnd = new Gauge('last_end');
export const options = {
  scenarios: {
    chat: { executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'chat',
            tags: { workload: 'chat-load' }, env: { KIND: 'chat-env' } },
    rag:  { executor: 'shared-iterations', vus: 1, iterations: 4, exec: 'rag',
            tags: { workload: 'rag-load' }, env: { KIND: 'rag-env', SHARED: 'overridden' } },
  },
};
function timed(fn) {
  if (__ITER === 0) firstStart.add(Date.now());
  fn();
  lastEnd.add(Date.now());
}
export function chat() {
  timed(() => {
    calls.add(1, { kind: __ENV.KIND, shared: __ENV.SHARED, fn: 'chat' });
    const r = llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, ignore_eos: true });
    if (!r.ok) throw new Error(r.error);
    sleep(0.1);
  });
}
export function rag() {
  timed(() => {
    calls.add(1, { kind: __ENV.KIND, shared: __ENV.SHARED, fn: 'rag' });
    sleep(0.1);
  });
}
export default function () { throw new Error('the default function must not run'); }
`, sim, nil)
	cfg.Env = map[string]string{"SHARED": "global"}
	e := load(t, cfg)
	if got := len(e.Scenarios()); got != 2 {
		t.Fatalf("%d scenarios, want 2", got)
	}
	if e.MaxVUs() != 3 {
		t.Errorf("MaxVUs = %d, want 3", e.MaxVUs())
	}
	rep := mustRun(t, e)

	if len(rep.ScriptErrors) != 0 {
		t.Fatalf("script errors: %+v", rep.ScriptErrors)
	}
	tests := []struct {
		scenario, workload, kind, shared, fn string
		iterations                           float64
	}{
		{"chat", "chat-load", "chat-env", "global", "chat", 6},
		{"rag", "rag-load", "rag-env", "overridden", "rag", 4},
	}
	for _, tc := range tests {
		t.Run(tc.scenario, func(t *testing.T) {
			scTags := tags("scenario", tc.scenario, "workload", tc.workload)
			if got := sum(rep, "iterations", scTags); got != tc.iterations {
				t.Errorf("iterations{%s} = %v, want %v", scTags.Key(), got, tc.iterations)
			}
			f := tags("scenario", tc.scenario, "workload", tc.workload, "kind", tc.kind, "shared", tc.shared, "fn", tc.fn)
			if got := sum(rep, "calls", f); got != tc.iterations {
				t.Errorf("calls{%s} = %v, want %v (series: %v)", f.Key(), got, tc.iterations, seriesKeys(rep, "calls"))
			}
		})
	}
	if got := count(rep, "llm_requests", tags("scenario", "chat", "workload", "chat-load", "model", testModel)); got != 6 {
		t.Errorf("llm_requests{scenario:chat} has %d samples, want 6", got)
	}
	if got := count(rep, "llm_requests", tags("scenario", "rag")); got != 0 {
		t.Errorf("llm_requests{scenario:rag} has %d samples, want 0", got)
	}

	// Both scenarios last at least 300 ms; had one run after the other,
	// its first iteration would start after the other's last one ended.
	span := func(scenario string) (first, last float64) {
		f := tags("scenario", scenario)
		start, end := rep.Snapshot.Stats("first_start", f), rep.Snapshot.Stats("last_end", f)
		if start == nil || end == nil {
			t.Fatalf("scenario %s recorded no first_start or last_end", scenario)
		}
		return start.Min, end.Max
	}
	chatStart, chatEnd := span("chat")
	ragStart, ragEnd := span("rag")
	if chatStart >= ragEnd || ragStart >= chatEnd {
		t.Errorf("scenarios did not overlap: chat ran [%v, %v] ms, rag [%v, %v] ms", chatStart, chatEnd, ragStart, ragEnd)
	}
}

func seriesKeys(rep *Report, name string) []string {
	var out []string
	for _, se := range rep.Snapshot.Series() {
		if se.Metric.Name == name {
			out = append(out, se.Tags.Key())
		}
	}
	return out
}

func TestStartTimeDelaysAScenario(t *testing.T) {
	cfg := testConfig(t, `
import { Gauge } from 'metrics';
const started = new Gauge('started_at');
export const options = {
  scenarios: {
    early: { executor: 'shared-iterations', vus: 1, iterations: 1 },
    late:  { executor: 'shared-iterations', vus: 1, iterations: 1, startTime: '300ms' },
  },
};
export default function () { started.add(Date.now()); }
`, nil, nil)
	e := load(t, cfg)
	if sc := e.Scenarios(); sc[0].Name != "early" || sc[1].Name != "late" || sc[1].StartTime != 300*time.Millisecond {
		t.Fatalf("scenarios = %+v, want early then late at 300ms", sc)
	}
	// startTime counts from the origin the run takes before it starts any
	// scenario, so from no earlier than before; the run's window starts
	// with the early scenario, which may begin a little after that origin,
	// so the late one may start a little less than 300 ms after it.
	before := time.Now()
	rep := mustRun(t, e)
	late := rep.Snapshot.Stats("started_at", tags("scenario", "late"))
	early := rep.Snapshot.Stats("started_at", tags("scenario", "early"))
	if late == nil || early == nil {
		t.Fatalf("started_at: late %v, early %v", late, early)
	}
	// Date.now() and UnixMilli both truncate to the millisecond.
	if got := late.Last - float64(before.UnixMilli()); got < 300 {
		t.Errorf("late scenario started %v ms after the run was started, want at least 300", got)
	}
	if late.Last < early.Last {
		t.Errorf("late scenario started at %v, before early at %v", late.Last, early.Last)
	}
	lw, ew := rep.Windows["late"], rep.Windows["early"]
	if d := lw.Start.Sub(before); d < 300*time.Millisecond {
		t.Errorf("late scenario's window starts %v after the run was started, want at least 300ms", d)
	}
	if d, least := rep.Duration(), 300*time.Millisecond-ew.Start.Sub(before); d < least {
		t.Errorf("measured window %v, want at least %v: from the early scenario's start past the late one's", d, least)
	}
	if ew.Start.Before(rep.Start) || ew.End.Before(ew.Start) || lw.End.Before(lw.Start) || rep.End.Before(lw.End) {
		t.Errorf("windows %+v are not within the run's [%v, %v]", rep.Windows, rep.Start, rep.End)
	}
}

func TestIterationExceptionsAreCountedAndTheRunGoesOn(t *testing.T) {
	cfg := testConfig(t, `
import { Counter } from 'metrics';
const done = new Counter('done');
export const options = { vus: 1, iterations: 7 };
export default function () {
  if (__ITER >= 1 && __ITER <= 3) {
    throw new Error('boom');
  }
  if (__ITER === 5) {
    const missing = null;
    missing.field = 1;
  }
  done.add(1);
}
`, nil, nil)
	rep := mustRun(t, load(t, cfg))

	if got := sum(rep, "iterations", nil); got != 7 {
		t.Errorf("iterations = %v, want 7 (iterations that threw count as iterations)", got)
	}
	if got := sum(rep, "done", nil); got != 3 {
		t.Errorf("done = %v, want 3 (iterations 0, 4 and 6)", got)
	}
	if got := sum(rep, "script_errors", tags("scenario", "default")); got != 4 {
		t.Errorf("script_errors = %v, want 4", got)
	}
	if got := sum(rep, "iterations_interrupted", nil); got != 0 {
		t.Errorf("iterations_interrupted = %v, want 0", got)
	}
	if len(rep.ScriptErrors) != 2 || rep.OtherScriptErrors != 0 {
		t.Fatalf("ScriptErrors = %+v (other %d), want 2 distinct", rep.ScriptErrors, rep.OtherScriptErrors)
	}
	want := []struct {
		count int64
		parts []string
	}{
		{3, []string{"script.js:7:11", "Error: boom"}},
		{1, []string{"script.js:11:", "TypeError"}},
	}
	for i, w := range want {
		got := rep.ScriptErrors[i]
		if got.Count != w.count {
			t.Errorf("ScriptErrors[%d].Count = %d, want %d (%q)", i, got.Count, w.count, got.Message)
		}
		for _, p := range w.parts {
			if !strings.Contains(got.Message, p) {
				t.Errorf("ScriptErrors[%d] = %q, want it to contain %q", i, got.Message, p)
			}
		}
	}
}

func TestIterationCounts(t *testing.T) {
	tests := []struct {
		name    string
		options string
		total   float64
		perVU   map[string]float64 // nil: not checked per VU
	}{
		{"shared-iterations", `{ vus: 3, iterations: 10 }`, 10, nil},
		{"per-vu-iterations", `{ scenarios: { s: { executor: 'per-vu-iterations', vus: 3, iterations: 4 } } }`, 12,
			map[string]float64{"1": 4, "2": 4, "3": 4}},
		{"one iteration by default", `{}`, 1, map[string]float64{"1": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, `
import { Counter } from 'metrics';
const byVU = new Counter('by_vu');
export const options = `+tc.options+`;
export default function () { byVU.add(1, { vu: String(__VU), iter: String(__ITER) }); }
`, nil, nil)
			rep := mustRun(t, load(t, cfg))
			if got := sum(rep, "iterations", nil); got != tc.total {
				t.Errorf("iterations = %v, want %v", got, tc.total)
			}
			if got := sum(rep, "by_vu", nil); got != tc.total {
				t.Errorf("by_vu = %v, want %v", got, tc.total)
			}
			for vu, want := range tc.perVU {
				if got := sum(rep, "by_vu", tags("vu", vu)); got != want {
					t.Errorf("by_vu{vu:%s} = %v, want %v", vu, got, want)
				}
				// __ITER counts each VU's iterations from 0.
				for it := range int(want) {
					if got := sum(rep, "by_vu", tags("vu", vu, "iter", fmt.Sprint(it))); got != 1 {
						t.Errorf("by_vu{vu:%s,iter:%d} = %v, want 1", vu, it, got)
					}
				}
			}
			if vus := rep.Snapshot.TagValues("by_vu", "vu"); slices.Contains(vus, "0") {
				t.Errorf("an iteration ran as VU 0 (setup's VU): %v", vus)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		config bool // a *ConfigError rather than a *js.ScriptError
		parts  []string
	}{
		{"llm.stream in init code", `
import llm from 'llm';
const r = llm.stream({ messages: [{ role: 'user', content: 'hi' }] });
export default function () {}
`, false, []string{"script.js:3:", "init context"}},
		{"exception in init code", `
throw new Error('init failed');
export default function () {}
`, false, []string{"script.js:2:", "init failed"}},
		{"exec function missing", `
export const options = { scenarios: { a: { executor: 'shared-iterations', exec: 'nope' } } };
export default function () {}
`, true, []string{"options.scenarios.a.exec", `"nope"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(t.Context(), testConfig(t, tc.src, nil, nil))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			var se *js.ScriptError
			var ce *ConfigError
			if tc.config && !errors.As(err, &ce) {
				t.Errorf("error %T is not a *ConfigError: %v", err, err)
			}
			if !tc.config && !errors.As(err, &se) {
				t.Errorf("error %T is not a *js.ScriptError: %v", err, err)
			}
			for _, p := range tc.parts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not contain %q", err, p)
				}
			}
		})
	}
}

// A setup() that throws stops the run before any iteration, and teardown()
// is not called (as in k6): Run returns the setup error, positioned, with a
// report of what ran.
func TestSetupThrows(t *testing.T) {
	logs := &logBuffer{}
	cfg := testConfig(t, `
export const options = { vus: 2, iterations: 4 };
export function setup() {
  console.log('setup ran');
  throw new Error('cannot prepare');
}
export default function () { console.log('iteration ran'); }
export function teardown() { console.log('teardown ran'); }
`, nil, logs)
	rep, err := runBounded(t, t.Context(), load(t, cfg))
	if err == nil {
		t.Fatal("Run returned no error")
	}
	var se *js.ScriptError
	if !errors.As(err, &se) {
		t.Errorf("error %T is not a *js.ScriptError: %v", err, err)
	}
	for _, p := range []string{"setup()", "script.js:5:", "cannot prepare"} {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
	if rep == nil {
		t.Fatal("no report")
	}
	if rep.Interrupted {
		t.Error("Report.Interrupted set")
	}
	if got := sum(rep, "iterations", nil); got != 0 {
		t.Errorf("iterations = %v, want 0", got)
	}
	out := logs.String()
	if !strings.Contains(out, "setup ran") {
		t.Errorf("setup's console output is missing:\n%s", out)
	}
	for _, absent := range []string{"iteration ran", "teardown ran"} {
		if strings.Contains(out, absent) {
			t.Errorf("console output contains %q after setup failed:\n%s", absent, out)
		}
	}
}

func TestLifecycleTimeout(t *testing.T) {
	tests := []struct {
		name, src, want string
		iterations      float64
	}{
		{"setup", `
export const options = { setupTimeout: '200ms' };
export function setup() { while (true) {} }
export default function () {}
`, "setup() did not finish within 200ms (raise setupTimeout in options)", 0},
		{"teardown", `
export const options = { teardownTimeout: '200ms' };
export default function () {}
export function teardown() { for (;;) {} }
`, "teardown() did not finish within 200ms (raise teardownTimeout in options)", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := load(t, testConfig(t, tc.src, nil, nil))
			start := time.Now()
			rep, err := runBounded(t, t.Context(), e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run error = %v, want one containing %q", err, tc.want)
			}
			if el := time.Since(start); el < 200*time.Millisecond {
				t.Errorf("Run returned after %v, before the 200ms timeout", el)
			}
			if rep == nil {
				t.Fatal("no report")
			}
			if got := sum(rep, "iterations", nil); got != tc.iterations {
				t.Errorf("iterations = %v, want %v", got, tc.iterations)
			}
		})
	}
}

func TestGracefulStopInterruptsIterations(t *testing.T) {
	// Each VU's one iteration outlives duration + gracefulStop and is cut
	// at 400ms: counted as interrupted, not as an iteration nor an error,
	// and the code after the cut call never runs (no check recorded).
	tests := []struct {
		name, call    string
		interruptedRq float64
	}{
		{"sleep", `sleep(10)`, 0},
		{"llm request", `llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 3000, ignore_eos: true })`, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sim := startSim(t, 5*time.Millisecond) // 3000 tokens: 15s
			cfg := testConfig(t, `
import llm from 'llm';
import { check, sleep } from 'llmrun';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 4, duration: '300ms', gracefulStop: '100ms' } } };
export default function () {
  const r = `+tc.call+`;
  check(r, { 'ran after the cut': (r) => r !== undefined && r.ok });
}
`, sim, nil)
			start := time.Now()
			rep := mustRun(t, load(t, cfg))
			elapsed := time.Since(start)

			if got := sum(rep, "iterations_interrupted", tags("scenario", "s")); got != 4 {
				t.Errorf("iterations_interrupted = %v, want 4", got)
			}
			for _, name := range []string{"iterations", "iteration_duration", "script_errors", "checks"} {
				if got := count(rep, name, nil); got != 0 {
					t.Errorf("%s has %d samples, want none", name, got)
				}
			}
			if len(rep.ScriptErrors) != 0 {
				t.Errorf("ScriptErrors = %+v, want none", rep.ScriptErrors)
			}
			if got := sum(rep, "llm_interrupted", nil); got != tc.interruptedRq {
				t.Errorf("llm_interrupted = %v, want %v", got, tc.interruptedRq)
			}
			for _, name := range []string{"llm_requests", "llm_failed", "llm_errors"} {
				if got := count(rep, name, nil); got != 0 {
					t.Errorf("%s has %d samples, want none", name, got)
				}
			}
			if d := rep.Duration(); d < 400*time.Millisecond {
				t.Errorf("measured window %v, want at least duration + gracefulStop = 400ms", d)
			}
			if elapsed > 8*time.Second {
				t.Errorf("Run took %v: the 10s iterations were not cut", elapsed)
			}
		})
	}
}

func TestCanceledRunCountsRequestsInFlightAsInterrupted(t *testing.T) {
	sim := startSim(t, 5*time.Millisecond) // 3000 tokens: 15s
	url, streaming := serveCountingStreams(t, sim.Server().Handler(), 2)
	logs := &logBuffer{}
	cfg := testConfig(t, `
import llm from 'llm';
import { check } from 'llmrun';
export const options = { vus: 2, duration: '30s' };
export default function () {
  const r = llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 3000, ignore_eos: true });
  check(r, { ok: (r) => r.ok });
}
export function teardown() { console.log('teardown ran'); }
`, nil, logs)
	cfg.LLM.BaseURL = url + "/v1"
	e := load(t, cfg)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		// Cancel once both responses are streaming tokens.
		select {
		case <-streaming:
		case <-ctx.Done():
		}
		cancel()
	}()
	rep, err := runBounded(t, ctx, e)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	if !rep.Interrupted {
		t.Error("Report.Interrupted not set")
	}
	if got := sum(rep, "llm_interrupted", tags("scenario", "default", "model", testModel)); got != 2 {
		t.Errorf("llm_interrupted = %v, want 2", got)
	}
	for _, name := range []string{"llm_requests", "llm_failed", "llm_errors", "llm_e2e", "iterations", "script_errors", "checks"} {
		if got := count(rep, name, nil); got != 0 {
			t.Errorf("%s has %d samples, want none", name, got)
		}
	}
	if got := sum(rep, "iterations_interrupted", nil); got != 2 {
		t.Errorf("iterations_interrupted = %v, want 2", got)
	}
	if !strings.Contains(logs.String(), "teardown ran") {
		t.Errorf("teardown did not run after the cancellation:\n%s", logs.String())
	}
}

// serveCountingStreams serves h on 127.0.0.1 and closes the returned
// channel once n responses have written their first bytes.
func serveCountingStreams(t *testing.T, h http.Handler, n int32) (string, <-chan struct{}) {
	t.Helper()
	streaming := make(chan struct{})
	var started atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&firstWrite{ResponseWriter: w, first: func() {
			if started.Add(1) == n {
				close(streaming)
			}
		}}, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, streaming
}

// firstWrite is a ResponseWriter that calls first at its first write.
type firstWrite struct {
	http.ResponseWriter
	once  sync.Once
	first func()
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(w.first)
	return w.ResponseWriter.Write(p)
}

func (w *firstWrite) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *firstWrite) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestMathRandomIsSeededPerVU(t *testing.T) {
	src := `
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } } };
export default function () {
  console.log(JSON.stringify({ vu: __VU, r: [Math.random(), Math.random(), Math.random()] }));
}
`
	draws := func(seed int64) map[int][]float64 {
		t.Helper()
		logs := &logBuffer{}
		cfg := testConfig(t, src, nil, nil)
		cfg.Seed = seed
		cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
		mustRun(t, load(t, cfg))
		out := map[int][]float64{}
		for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
			var rec struct{ Msg string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			var d struct {
				VU int
				R  []float64
			}
			if err := json.Unmarshal([]byte(rec.Msg), &d); err != nil {
				t.Fatalf("message %q: %v", rec.Msg, err)
			}
			out[d.VU] = d.R
		}
		if len(out) != 2 || len(out[1]) != 3 || len(out[2]) != 3 {
			t.Fatalf("draws = %v, want 3 from each of VUs 1 and 2", out)
		}
		return out
	}
	a, b, other := draws(42), draws(42), draws(1000)
	for vu := 1; vu <= 2; vu++ {
		if !slices.Equal(a[vu], b[vu]) {
			t.Errorf("VU %d drew %v then %v with the same seed", vu, a[vu], b[vu])
		}
		if slices.Equal(a[vu], other[vu]) {
			t.Errorf("VU %d drew %v with seeds 42 and 1000", vu, a[vu])
		}
	}
	if slices.Equal(a[1], a[2]) {
		t.Errorf("VUs 1 and 2 drew the same numbers %v", a[1])
	}
	for _, r := range append(a[1], a[2]...) {
		if r < 0 || r >= 1 {
			t.Errorf("Math.random() = %v, outside [0, 1)", r)
		}
	}
}

func TestOptionsTagsReachEverySample(t *testing.T) {
	sim := startSim(t, 0)
	cfg := testConfig(t, `
import llm from 'llm';
import { check } from 'llmrun';
import { Trend } from 'metrics';
const tr = new Trend('my_trend');
export const options = {
  tags: { team: 'serving', workload: 'global' },
  scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 2, tags: { workload: 'scenario-wins' } } },
};
export default function () {
  const r = llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 3, ignore_eos: true });
  check(r, { ok: (r) => r.ok });
  tr.add(1);
}
`, sim, nil)
	rep := mustRun(t, load(t, cfg))
	want := tags("team", "serving", "workload", "scenario-wins", "scenario", "s")
	for _, se := range rep.Snapshot.Series() {
		if !se.Tags.Contains(want) {
			t.Errorf("series %s{%s} lacks the options and scenario tags %s", se.Metric.Name, se.Tags.Key(), want.Key())
		}
	}
	for name, n := range map[string]int64{"iterations": 2, "llm_requests": 2, "checks": 2, "my_trend": 2} {
		if got := count(rep, name, want); got != n {
			t.Errorf("%s{%s} has %d samples, want %d", name, want.Key(), got, n)
		}
	}
	if st := rep.Snapshot.Stats("checks", tags("check", "ok")); st == nil || st.NonZero != 2 {
		t.Errorf("checks{check:ok} = %+v, want 2 passes", st)
	}
}

// TestModulesComeFromTheConfig: a script imports what Config.Modules
// holds besides 'llm', which the engine makes itself and refuses from
// the configuration.
func TestModulesComeFromTheConfig(t *testing.T) {
	cfg := testConfig(t, `import { check } from 'llmrun'; export default function () {}`, nil, nil)
	cfg.Modules = nil
	if _, err := Load(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "llmrun") {
		t.Errorf("no modules but llm: error = %v, want one naming 'llmrun'", err)
	}
	cfg.Modules = modules.NewRegistry()
	if err := cfg.Modules.Register("llm", metricsjs.Module{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "the engine makes 'llm' itself") {
		t.Errorf("'llm' in Config.Modules: error = %v", err)
	}
}

// BeforeStart runs after setup() and before the first iteration; its
// error ends the run before any iteration, and teardown() still runs.
func TestBeforeStart(t *testing.T) {
	for _, fail := range []bool{false, true} {
		logs := &logBuffer{}
		cfg := testConfig(t, `
export const options = { vus: 1, iterations: 1 };
export function setup() { console.log('setup ran'); }
export default function () { console.log('iteration ran'); }
export function teardown() { console.log('teardown ran'); }
`, nil, logs)
		var before string
		cfg.BeforeStart = func(context.Context) error {
			before = logs.String()
			if fail {
				return errors.New("instance 2 did not arrive")
			}
			return nil
		}
		rep, err := runBounded(t, t.Context(), load(t, cfg))
		if strings.Contains(before, "iteration ran") || !strings.Contains(before, "setup ran") {
			t.Errorf("BeforeStart ran after %q, want after setup() and before the iterations", before)
		}
		want := []string{"setup ran", "iteration ran", "teardown ran"}
		if fail {
			if err == nil || !strings.Contains(err.Error(), "instance 2 did not arrive") || rep == nil {
				t.Errorf("Run returned %v, want BeforeStart's error and a report", err)
			}
			want = []string{"setup ran", "teardown ran"}
		} else if err != nil {
			t.Fatal(err)
		}
		if out := logs.String(); strings.Count(out, " ran") != len(want) || !containsAll(out, want) {
			t.Errorf("fail=%v: console output %q, want exactly %q", fail, out, want)
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
