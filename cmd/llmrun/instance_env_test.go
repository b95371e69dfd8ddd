package main

import (
	"context"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// A script knows which instance it runs in from __ENV, whether the
// instance was given by flags or, as in a Kubernetes Indexed Job, by the
// environment; a run that is not one of instances has neither variable.
func TestInstanceInEnv(t *testing.T) {
	script := writeScript(t, "env.js", `
export const options = { iterations: 1 };
export function setup() { console.log('instance=' + __ENV.LLMRUN_INSTANCE + ' instances=' + __ENV.LLMRUN_INSTANCES); }
export default function () {}
`)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"flags", nil, []string{"--instances", "1", "--instance", "0"}, "instance=0 instances=1"},
		{"job", map[string]string{"LLMRUN_INSTANCES": "1", "JOB_COMPLETION_INDEX": "0"}, nil, "instance=0 instances=1"},
		{"none", nil, nil, "instance=undefined instances=undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"run", "-q", "--include-system-env-vars=false"}, tt.args...), script)
			code, stdout, stderr := cli(t, context.Background(), tt.env, args...)
			if code != exitcode.OK || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("exit %d, want 0 and the script logging %q:\n%s\n%s", code, tt.want, stdout, stderr)
			}
		})
	}
}
