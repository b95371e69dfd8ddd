package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// llmrun run reads the dashboard's flags and variables: one given, the
// banner names the address it serves at; a setting without a dashboard
// is a usage error.
func TestRunDashboardFromFlagsAndEnvironment(t *testing.T) {
	script := writeScript(t, "one.js", "import llm from 'llm';\nexport const options = { iterations: 1 };\n"+
		"export default function () { llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4 }); }\n")
	served := regexp.MustCompile(`(?m)^  output: +dashboard http://127\.0\.0\.1:\d+/$`)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"--dashboard=127.0.0.1:0", "--dashboard-period=100ms"}},
		{"environment", map[string]string{"LLMRUN_DASHBOARD": "127.0.0.1:0", "LLMRUN_DASHBOARD_PERIOD": "100ms"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--no-preflight", "--no-color"}, append(tc.args, script)...)
			code, stdout, stderr := cli(t, context.Background(), tc.env, args...)
			if code != exitcode.OK || !served.MatchString(stdout) {
				t.Errorf("exit %d, want 0 with a banner naming the dashboard:\n%s\n%s", code, stdout, stderr)
			}
		})
	}
	code, _, stderr := cli(t, context.Background(), nil, "run", "--dashboard-linger=1m", script)
	if code != exitcode.Usage || !strings.Contains(stderr, "no --dashboard") {
		t.Errorf("--dashboard-linger alone: exit %d, stderr %q; want a usage error saying no --dashboard asks for one", code, stderr)
	}
}
