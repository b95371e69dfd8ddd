package console_test

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/output/console"
)

// The script's console output is one line per call, its level and the
// VU, without a timestamp.
func TestLogger(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	console.Logger(&out).Debug("hello", "vu", 3)
	if got, want := out.String(), "level=DEBUG msg=hello vu=3\n"; got != want {
		t.Errorf("logged %q, want %q", got, want)
	}
}
