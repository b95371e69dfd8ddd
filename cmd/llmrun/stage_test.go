package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// -s/--stage replaces the script's load shape with ramping-vus, starting
// at -u VUs; a malformed stage is a bad command line, and stages with a
// duration contradict each other.
func TestStageFlag(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "s.js", `
import { sleep } from 'llmrun';
export const options = { vus: 1, duration: '1h' };
export default function () { sleep(0.01); }
`)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-u", "2", "-s", "200ms:3", "--stage", "100ms:0", "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	sum := readSummary(t, export)
	if len(sum.Meta.LoadShape) != 1 || sum.Meta.LoadShape[0].Executor != "ramping-vus" || sum.Meta.LoadShape[0].MaxVUs != 3 ||
		!strings.Contains(sum.Meta.LoadShape[0].Description, "from 2") {
		t.Errorf("load shape %+v, want one ramping-vus scenario from 2 up to 3 VUs", sum.Meta.LoadShape)
	}
	if sum.Serving.Iterations == 0 {
		t.Error("no iterations ran")
	}

	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-s", "30s", script}, exitcode.Usage, `invalid stage "30s": use DURATION:TARGET`},
		{[]string{"run", "-s", "soon:3", script}, exitcode.Usage, `invalid duration "soon"`},
		{[]string{"run", "-s", "1s:many", script}, exitcode.Usage, `the target "many" is not a number`},
		{[]string{"run", "-s", "1s:3", "-d", "1s", script}, exitcode.InvalidConfig, "--stage: use either stages or duration"},
		{[]string{"run", "-s", "1s:-3", script}, exitcode.InvalidConfig, "--stage: stages[0].target must be a non-negative number"},
	}
	for _, tc := range tests {
		code, stdout, stderr := cli(t, context.Background(), nil, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q (stdout %q)", tc.args, code, stderr, tc.code, tc.want, stdout)
		}
	}
}
