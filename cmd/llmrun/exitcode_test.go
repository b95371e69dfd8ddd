package main

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/runner"
)

// Every verdict of the runner has an exit code, and only Passed exits 0:
// a verdict added without one would otherwise read as success.
func TestEveryVerdictHasAnExitCode(t *testing.T) {
	t.Parallel()
	n := 0
	for v := runner.Passed; !strings.HasPrefix(v.String(), "Verdict("); v++ {
		n++
		code, ok := verdictCodes[v]
		switch {
		case !ok:
			t.Errorf("verdict %v has no exit code", v)
		case (code == exitOK) != (v == runner.Passed):
			t.Errorf("verdict %v exits %d", v, code)
		}
	}
	if n != len(verdictCodes) {
		t.Errorf("%d verdicts, %d exit codes", n, len(verdictCodes))
	}
}
