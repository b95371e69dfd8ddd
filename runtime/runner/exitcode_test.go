package runner

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// Every verdict of the runner has an exit code, and only Passed exits 0:
// a verdict added without one would otherwise read as success.
func TestEveryVerdictHasAnExitCode(t *testing.T) {
	t.Parallel()
	n := 0
	for v := Passed; !strings.HasPrefix(v.String(), "Verdict("); v++ {
		n++
		switch code := v.ExitCode(); {
		case int(v) >= len(verdictCodes):
			t.Errorf("verdict %v has no exit code", v)
		case (code == exitcode.OK) != (v == Passed):
			t.Errorf("verdict %v exits %d", v, code)
		}
	}
	if n != len(verdictCodes) {
		t.Errorf("%d verdicts, %d exit codes", n, len(verdictCodes))
	}
}

// Outcome.ExitCode applies the exit codes' precedence (docs/cli.md) to
// a run's verdict and what went wrong after it.
func TestExitCodePrecedence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		outcome Outcome
		want    int
	}{
		{Outcome{Verdict: Passed}, exitcode.OK},
		{Outcome{Verdict: Passed, Lost: true}, exitcode.Error},
		{Outcome{Verdict: ThresholdsFailed, Lost: true}, exitcode.Error},
		{Outcome{Verdict: NoSuccess, Lost: true}, exitcode.NoSuccess},
		{Outcome{Verdict: EarlyStopped, Lost: true}, exitcode.NoSuccess},
		{Outcome{Verdict: ThresholdAborted, Lost: true}, exitcode.ThresholdAbort},
		{Outcome{Verdict: Interrupted, ScriptFailed: true}, exitcode.Interrupted},
		{Outcome{Verdict: InvalidConfig, ScriptFailed: true}, exitcode.InvalidConfig},
		{Outcome{Verdict: NoSuccess, ScriptFailed: true}, exitcode.ScriptError},
		{Outcome{Verdict: ThresholdsFailed, ScriptFailed: true, Lost: true}, exitcode.ScriptError},
	} {
		if got := tc.outcome.ExitCode(); got != tc.want {
			t.Errorf("%+v.ExitCode() = %d, want %d", tc.outcome, got, tc.want)
		}
	}
}
