package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/executor/segment"
)

// middleThird is the part 1/3:2/3 of 0,1/3,2/3,1.
func middleThird(t *testing.T) segment.Part {
	t.Helper()
	s, err := segment.Parse("1/3:2/3")
	if err != nil {
		t.Fatal(err)
	}
	p, err := segment.NewPart(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResolveScenarios(t *testing.T) {
	three, five, ten := 3, 5, 10
	minute := time.Minute
	cliStages := []executor.Stage{executor.NewStage(10*time.Second, 5), executor.NewStage(5*time.Second, 0)}
	tests := []struct {
		name     string
		options  string
		ov       Overrides
		executor string
		describe string
	}{
		{"nothing: one iteration", `{}`, Overrides{}, "shared-iterations", "1 iteration shared among 1 VU"},
		{"duration → constant-vus", `{"vus": 4, "duration": "10s"}`, Overrides{}, "constant-vus", "4 looping VUs for 10s"},
		{"iterations → shared", `{"vus": 2, "iterations": 20}`, Overrides{}, "shared-iterations", "20 iterations shared among 2 VUs"},
		{"both → shared bounded", `{"vus": 2, "iterations": 20, "duration": "30s"}`, Overrides{}, "shared-iterations", "maxDuration 30s"},
		{"command line replaces scenarios", `{"scenarios": {"a": {"executor": "constant-vus", "duration": "1s"}}}`,
			Overrides{VUs: &five, Duration: &minute}, "constant-vus", "5 looping VUs for 1m0s"},
		{"scenario", `{"scenarios": {"chat": {"executor": "per-vu-iterations", "vus": 3, "iterations": 7, "exec": "chat"}}}`,
			Overrides{}, "per-vu-iterations", "7 iterations for each of 3 VUs"},
		{"command line iterations", `{}`, Overrides{VUs: &five, Iterations: &ten}, "shared-iterations", "10 iterations shared among 5 VUs"},
		{"command line duration keeps the script's vus", `{"vus": 16, "duration": "1h"}`, Overrides{Duration: &minute}, "constant-vus", "16 looping VUs for 1m0s"},
		// stages, the shorthand of ramping-vus, and -s
		{"stages → ramping-vus from 1 VU", `{"stages": [{"duration": "30s", "target": 10}]}`, Overrides{},
			"ramping-vus", "up to 10 looping VUs over 1 stage for 30s, from 1"},
		{"vus is the start", `{"vus": 4, "stages": [{"duration": "30s", "target": 10}, {"duration": "10s", "target": 0}]}`, Overrides{},
			"ramping-vus", "over 2 stages for 40s, from 4"},
		{"-s replaces the script's duration", `{"vus": 3, "duration": "1h"}`, Overrides{Stages: cliStages},
			"ramping-vus", "up to 5 looping VUs over 2 stages for 15s, from 3"},
		{"-s with -u", `{}`, Overrides{Stages: cliStages, VUs: &three}, "ramping-vus", "from 3"},
		{"-u sets the start of the script's stages", `{"vus": 1, "stages": [{"duration": "30s", "target": 10}]}`, Overrides{VUs: &three},
			"ramping-vus", "up to 10 looping VUs over 1 stage for 30s, from 3"},
		{"-d replaces the script's stages", `{"vus": 3, "stages": [{"duration": "30s", "target": 10}]}`, Overrides{Duration: &minute},
			"constant-vus", "3 looping VUs for 1m0s"},
		{"-s replaces the script's scenarios", `{"scenarios": {"a": {"executor": "constant-vus", "duration": "1s"}}}`, Overrides{Stages: cliStages},
			"ramping-vus", "up to 5"},
		// an execution segment takes its part of the resolved scenarios
		{"segment of the shorthand", `{"vus": 10, "duration": "10s"}`, Overrides{Segment: middleThird(t)}, "constant-vus", "3 looping VUs for 10s"},
		{"segment of a scenario", `{"scenarios": {"chat": {"executor": "shared-iterations", "vus": 6, "iterations": 100}}}`,
			Overrides{Segment: middleThird(t)}, "shared-iterations", "33 iterations shared among 2 VUs"},
		{"segment of the command line", `{}`, Overrides{VUs: &five, Iterations: &ten, Segment: middleThird(t)}, "shared-iterations", "3 iterations shared among 2 VUs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseOptions([]byte(tc.options))
			if err != nil {
				t.Fatal(err)
			}
			scs, err := ResolveScenarios(o, tc.ov)
			if err != nil {
				t.Fatal(err)
			}
			if len(scs) != 1 || scs[0].Executor != tc.executor || !strings.Contains(scs[0].Config.Describe(), tc.describe) {
				t.Fatalf("got %+v (%s), want one %s scenario described as %q", scs, scs[0].Config.Describe(), tc.executor, tc.describe)
			}
		})
	}
}

func TestScenarioFieldsAndOrder(t *testing.T) {
	o, err := ParseOptions([]byte(`{"scenarios": {
		"late": {"executor": "constant-vus", "duration": "1s", "startTime": "2s", "exec": "rag", "tags": {"workload": "rag"}, "env": {"K": "V"}},
		"early": {"executor": "shared-iterations", "iterations": 3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	scs, err := ResolveScenarios(o, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != 2 || scs[0].Name != "early" || scs[1].Name != "late" {
		t.Fatalf("order: %+v", scs)
	}
	late := scs[1]
	if late.Exec != "rag" || late.StartTime != 2*time.Second || late.Tags["workload"] != "rag" || late.Env["K"] != "V" {
		t.Errorf("late = %+v", late)
	}
	if scs[0].Exec != "default" {
		t.Errorf("exec default = %q", scs[0].Exec)
	}
}

func TestOptionErrorsNameTheField(t *testing.T) {
	tests := []struct{ options, want string }{
		{`{"vu": 3}`, `options.vu: unknown field (did you mean "vus"?)`},
		{`{"treshholds": {}}`, `options.treshholds: unknown field (did you mean "thresholds"?)`},
		{`{"scenarios": {"a": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s", "preAllocatedVU": 2}}}`,
			`options.scenarios.a.preAllocatedVU: unknown field (did you mean "preAllocatedVUs"?)`},
		{`{"frobnicate": 1}`, "options.frobnicate: unknown field"},
		{`{"vus": "many"}`, "options.vus: expected a whole number, got a string"},
		{`{"earlyStop": {"requests": 1.5}}`, "options.earlyStop: earlyStop takes { requests: 10, classes: [...], midRun: { for: '5s', requests: 10, classes: [...] }, backoff: '1s', minSuccessRate: 0.9 }: requests: expected a whole number, got 1.5"},
		{`{"warmup": {"iterations": "ten"}, "vus": 1, "duration": "1s"}`, "options.warmup: warmup takes { iterations: N } or { duration: '30s' }: iterations: expected a whole number, got a string"},
		{`{"vus": 1.5, "duration": "1s"}`, "options.vus: expected a whole number, got 1.5"},
		{`{"vus": 100000000000000000000, "duration": "1s"}`, "options.vus: 100000000000000000000 is too large a number"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "rate": 1e400, "duration": "1s", "preAllocatedVUs": 1}}}`, "options.scenarios.x.rate: 1e400 is too large a number"},
		{`{"vus": 1000000000000, "duration": "1s"}`, "options.vus: 1000000000000 exceeds llmrun's limit of 100000 VUs per process (see docs/limits.md)"},
		{`{"vus": null, "duration": "1s"}`, "options.vus: must be a finite value, got NaN, Infinity or null"},
		{`{"vus": 2, "duration": null}`, "options.duration: must be a finite value"},
		{`{"duration": "NaN"}`, "options.duration: must be a finite duration"},
		{`{"duration": 1e300}`, "options.duration: 1e300 (milliseconds) exceeds llmrun's limit of 8760h0m0s (365 days) for a duration"},
		{`{"duration": 1e400}`, "options.duration: 1e400 (milliseconds) exceeds llmrun's limit"},
		{`{"duration": "99999999999h"}`, `options.duration: "99999999999h" exceeds llmrun's limit`},
		{`{"duration": "9000h"}`, `options.duration: "9000h" exceeds llmrun's limit`},
		{`{"stages": [{"duration": "1s", "target": 1e12}]}`, "options.stages[0].target: 1000000000000 exceeds llmrun's limit of 100000 VUs"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s", "preAllocatedVUs": 1, "maxVUs": 1000000000000}}}`,
			"invalid options: options.scenarios.x.maxVUs: 1000000000000 exceeds llmrun's limit of 100000 VUs per process (see docs/limits.md)"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s", "preAllocatedVUs": 1000000000000}}}`, "options.scenarios.x.preAllocatedVUs: 1000000000000 exceeds"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "rate": 1e15, "duration": "1s", "preAllocatedVUs": 1}}}`,
			"options.scenarios.x.rate: 1000000000000000 per second is 1000000000000000 iterations per second, above llmrun's limit of 1000000 per second per scenario"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "rate": 1, "timeUnit": "1ns", "duration": "1s", "preAllocatedVUs": 1}}}`, "options.scenarios.x.rate: 1 per 1ns is 1000000000 iterations per second"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "rate": null, "duration": "1s", "preAllocatedVUs": 1}}}`, "options.scenarios.x.rate: must be a finite value"},
		{`{"scenarios": {"x": {"executor": "ramping-arrival-rate", "preAllocatedVUs": 1, "stages": [{"duration": "1s", "target": 1}, {"duration": "1s", "target": 2e6}]}}}`, "options.scenarios.x.stages[1].target: 2000000 per second"},
		{`{"scenarios": {"x": {"executor": "ramping-vus", "stages": [{"duration": "8000h", "target": 1}, {"duration": "8000h", "target": 1}]}}}`, "options.scenarios.x.stages: the stages' total of 16000h0m0s exceeds llmrun's limit"},
		{`{"scenarios": {"x": {"executor": "shared-iterations", "vus": 200000, "iterations": 200000}}}`, "options.scenarios.x.vus: 200000 exceeds llmrun's limit"},
		{`{"scenarios": {"a": {"executor": "constant-vus", "vus": 60000, "duration": "1s"}, "b": {"executor": "constant-vus", "vus": 60000, "duration": "1s"}}}`,
			"options.scenarios: the scenarios use up to 120000 VUs together, more than llmrun's limit of 100000 VUs per process"},
		{`{"vus": 3}`, "vus needs a duration or a number of iterations"},
		{`{"vus": 2, "scenarios": {"a": {"executor": "constant-vus", "duration": "1s"}}}`, "either scenarios or the vus/duration/iterations shorthand"},
		{`{"scenarios": {"a": {"duration": "1s"}}}`, "options.scenarios.a.executor: is required"},
		{`{"scenarios": {"a": {"executor": "warp-speed"}}}`, `unknown executor "warp-speed"`},
		{`{"scenarios": {"a": {"executor": "constant-vus", "duration": "1s", "rate": 4}}}`, "options.scenarios.a.rate: unknown field (executor constant-vus)"},
		{`{"scenarios": {"a": {"executor": "constant-vus", "vus": -1, "duration": "1s"}}}`, "options.scenarios.a: vus must be at least 1"},
		{`{"scenarios": {"a": {"executor": "constant-vus", "duration": "1s", "startTime": "-1s"}}}`, "options.scenarios.a.startTime"},
		{`{"duration": "forever"}`, `invalid duration "forever"`},
	}
	for _, tc := range tests {
		o, err := ParseOptions([]byte(tc.options))
		if err == nil {
			_, err = ResolveScenarios(o, Overrides{})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.options, err, tc.want)
		}
	}
}

// The limit of VUs per process applies to a segment's part: a plan too big
// for one process runs split.
func TestSegmentVULimit(t *testing.T) {
	o, err := ParseOptions([]byte(`{"scenarios": {
		"a": {"executor": "constant-vus", "vus": 60000, "duration": "1m"},
		"b": {"executor": "constant-vus", "vus": 60000, "duration": "1m"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveScenarios(o, Overrides{}); err == nil || !strings.Contains(err.Error(), "up to 120000 VUs together") {
		t.Errorf("the whole plan: %v, want the limit of VUs per process", err)
	}
	scs, err := ResolveScenarios(o, Overrides{Segment: middleThird(t)})
	if err != nil {
		t.Fatalf("a third of the plan: %v", err)
	}
	if n := scs[0].Config.MaxVUs() + scs[1].Config.MaxVUs(); n != 40000 {
		t.Errorf("a third of 120000 VUs is %d", n)
	}
}

// A segment warms up with its share of the whole plan's warmup iterations;
// a warmup duration is every segment's.
func TestSegmentWarmup(t *testing.T) {
	o, err := ParseOptions([]byte(`{"warmup": {"iterations": 10}, "scenarios": {
		"a": {"executor": "constant-arrival-rate", "rate": 10, "duration": "1m", "preAllocatedVUs": 3},
		"b": {"executor": "constant-vus", "vus": 3, "duration": "1m", "warmup": {"duration": "5s"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	scs, err := ResolveScenarios(o, Overrides{Segment: middleThird(t)})
	if err != nil {
		t.Fatal(err)
	}
	if w := scs[0].Warmup; w.Iterations != 3 {
		t.Errorf("scenario a's warmup %+v, want the middle third's 3 of 10 iterations", w)
	}
	if w := scs[1].Warmup; w.Duration != 5*time.Second || w.Iterations != 0 {
		t.Errorf("scenario b's warmup %+v, want its 5s", w)
	}
}
