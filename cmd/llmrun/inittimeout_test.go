package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// TestInitTimeout stops init code that would never end, in VU 0 (which
// reads the options) and in a later VU, at --init-timeout with no signal:
// exit 107, naming the script, where it was and the limit.
func TestInitTimeout(t *testing.T) {
	t.Parallel()
	spin := writeScript(t, "spin.js", `
console.log('init');
for (;;) {}
export default function () {}
`)
	spinLater := writeScript(t, "spinlater.js", `
if (__VU === 2) { for (;;) {} }
export const options = { vus: 2, iterations: 2 };
export default function () {}
`)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"run", []string{"run", "--no-color", "--init-timeout", "300ms", spin}, exitcode.ScriptError,
			"llmrun run: " + spin + ": " + spin + ":"},
		{"inspect", []string{"inspect", "--init-timeout", "300ms", spin}, exitcode.ScriptError,
			"llmrun inspect: " + spin + ": " + spin + ":"},
		{"a later VU", []string{"run", "--no-color", "--init-timeout", "300ms", spinLater}, exitcode.ScriptError,
			"initialising VU 2: " + spinLater + ":"},
		{"negative", []string{"run", "--init-timeout", "-1s", spin}, exitcode.Usage,
			"llmrun run: --init-timeout must not be negative, got -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The bound of the test, far above the limit: init code
			// that is never stopped shows as a run interrupted here.
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			code, _, stderr := cli(t, ctx, nil, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q\nstderr:\n%s", code, tc.code, tc.want, stderr)
			}
			if tc.code == exitcode.ScriptError && !strings.Contains(stderr, "the script was interrupted here: the init code ran longer than 300ms, llmrun's limit for a VU's init code (--init-timeout)") {
				t.Errorf("stderr does not name the limit:\n%s", stderr)
			}
		})
	}
}
