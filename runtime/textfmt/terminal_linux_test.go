package textfmt_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/llmrun/llmrun/internal/ptytest"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

func TestTerminalWidth(t *testing.T) {
	file, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	narrow, _ := ptytest.Open(t, 80)
	wide, _ := ptytest.Open(t, 160)
	for _, tc := range []struct {
		name string
		w    io.Writer
		want int
	}{
		{"a terminal of 80 columns", narrow, 80},
		{"a terminal of 160 columns", wide, 160},
		{"a file", file, 0},
		{"a buffer", &bytes.Buffer{}, 0},
	} {
		if got := textfmt.TerminalWidth(tc.w); got != tc.want {
			t.Errorf("%s: width %d, want %d", tc.name, got, tc.want)
		}
	}
}
