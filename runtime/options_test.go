package runtime

import (
	"strings"
	"testing"
	"time"
)

func TestResolveScenarios(t *testing.T) {
	five, ten := 5, 10
	minute := time.Minute
	tests := []struct {
		name     string
		options  string
		ov       Overrides
		executor string
		describe string
	}{
		{"nothing: one iteration", `{}`, Overrides{}, "shared-iterations", "1 iterations shared among 1 VUs"},
		{"duration → constant-vus", `{"vus": 4, "duration": "10s"}`, Overrides{}, "constant-vus", "4 looping VUs for 10s"},
		{"iterations → shared", `{"vus": 2, "iterations": 20}`, Overrides{}, "shared-iterations", "20 iterations shared among 2 VUs"},
		{"both → shared bounded", `{"vus": 2, "iterations": 20, "duration": "30s"}`, Overrides{}, "shared-iterations", "maxDuration 30s"},
		{"command line replaces scenarios", `{"scenarios": {"a": {"executor": "constant-vus", "duration": "1s"}}}`,
			Overrides{VUs: &five, Duration: &minute}, "constant-vus", "5 looping VUs for 1m0s"},
		{"scenario", `{"scenarios": {"chat": {"executor": "per-vu-iterations", "vus": 3, "iterations": 7, "exec": "chat"}}}`,
			Overrides{}, "per-vu-iterations", "7 iterations for each of 3 VUs"},
		{"command line iterations", `{}`, Overrides{VUs: &five, Iterations: &ten}, "shared-iterations", "10 iterations shared among 5 VUs"},
		{"command line duration keeps the script's vus", `{"vus": 16, "duration": "1h"}`, Overrides{Duration: &minute}, "constant-vus", "16 looping VUs for 1m0s"},
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
		{`{"vu": 3}`, "options.vu: unknown field"},
		{`{"vus": "many"}`, "options.vus: expected a number"},
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
