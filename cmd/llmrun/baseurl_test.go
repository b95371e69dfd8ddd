package main

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// A base URL without a scheme (host:port) is an invalid configuration
// (exit 104, as any invalid base URL) naming the flag or variable it
// came from and saying to add http://, in every command that takes one;
// it is not blamed on the script.
func TestBaseURLWithoutScheme(t *testing.T) {
	script := writeScript(t, "s.js", `export default function () {}`)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"run --base-url", nil, []string{"run", script, "--base-url", "127.0.0.1:18000"},
			"llmrun run: invalid options: --base-url: invalid base URL: it has no scheme: add http:// (http://127.0.0.1:18000) or https://"},
		{"run $LLMRUN_BASE_URL", map[string]string{"LLMRUN_BASE_URL": "127.0.0.1:18000"}, []string{"run", script},
			"llmrun run: invalid options: $LLMRUN_BASE_URL: invalid base URL: it has no scheme: add http://"},
		{"run $OPENAI_BASE_URL", map[string]string{"OPENAI_BASE_URL": "localhost:8000/v1"}, []string{"run", script},
			"llmrun run: invalid options: $OPENAI_BASE_URL: invalid base URL: it has no scheme: add http:// (http://localhost:8000/v1)"},
		{"bench", nil, []string{"bench", "--base-url", "127.0.0.1:18000"}, "llmrun bench: invalid options: --base-url: invalid base URL: it has no scheme: add http://"},
		{"kube", nil, []string{"kube", script, "--base-url", "127.0.0.1:18000"}, "llmrun kube: invalid options: --base-url: invalid base URL: it has no scheme: add http://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, t.Context(), tc.env, tc.args...)
			if code != exitcode.InvalidConfig || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "s.js") {
				t.Errorf("exit %d, stderr %q; want %d and %q, not naming the script", code, stderr, exitcode.InvalidConfig, tc.want)
			}
		})
	}
}
