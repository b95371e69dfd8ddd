package console

import (
	"io"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/ptytest"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// On a terminal the footer fits its width, as the terminal shows it.
func TestFooterOnATerminal(t *testing.T) {
	for _, cols := range []uint16{80, 120, 160} {
		terminal, screen := ptytest.Open(t, cols)
		shown := make(chan string)
		go func() {
			b, _ := io.ReadAll(screen) // ends with EIO once terminal is closed
			shown <- strings.ReplaceAll(string(b), "\r\n", "\n")
		}()
		err := Render(terminal, &summary.Summary{Meta: footerMeta()}, textfmt.Style{Color: true})
		terminal.Close()
		out := <-shown
		if err != nil {
			t.Fatal(err)
		}
		blank := strings.LastIndex(out, "\n\n") // the footer follows the last blank line
		if blank < 0 {
			t.Fatalf("%d columns: no blank line before a footer in\n%s", cols, out)
		}
		footer := out[blank+2:]
		var lines []string
		for _, line := range strings.Split(strings.TrimSuffix(footer, "\n"), "\n") {
			if !strings.HasPrefix(line, "\x1b[2m") || !strings.HasSuffix(line, "\x1b[0m") {
				t.Errorf("%d columns: footer line %q is not faint on its own", cols, line)
			}
			lines = append(lines, strings.TrimSuffix(strings.TrimPrefix(line, "\x1b[2m"), "\x1b[0m"))
		}
		checkFooter(t, lines, int(cols))
	}
}
