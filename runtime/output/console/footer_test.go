package console

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// footerMeta is the meta of a run whose footer is longer than a wide
// terminal.
func footerMeta() summary.Meta {
	return summary.Meta{
		Version: "dev", Script: "/home/ci/bench/examples/chat-long-context.js", ScriptSHA256: "9c1d2e3f4a5b6c7d8e9f",
		Target: "http://127.0.0.1:43517", Models: []string{"llmsim-1"}, Seed: 8812345678901234567,
		Host: "ci-runner-07", CPUs: 1, RunID: "9f3c2a7b1e4d5c60", TestID: "chat-long-context",
	}
}

// footerParts are footerMeta's footer parts, in order.
var footerParts = []string{
	"llmrun dev", "script /home/ci/bench/examples/chat-long-context.js (sha256 9c1d2e3f4a5b)", "target http://127.0.0.1:43517",
	"model llmsim-1", "seed 8812345678901234567", "host ci-runner-07 (1 CPU)", "run 9f3c2a7b1e4d5c60 of test chat-long-context",
}

// checkFooter checks that lines are the footer's parts in order, each
// whole on one line, the lines at most width characters, as few as fit.
func checkFooter(t *testing.T, lines []string, width int) {
	t.Helper()
	var got []string
	for i, line := range lines {
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("width %d: line %d has %d characters: %q", width, i+1, n, line)
		}
		if i > 0 && utf8.RuneCountInString(lines[i-1]+" · "+strings.SplitN(line, " · ", 2)[0]) <= width {
			t.Errorf("width %d: line %d broke before a part that fit the line above: %q", width, i+1, lines)
		}
		got = append(got, strings.Split(line, " · ")...)
	}
	if strings.Join(got, "\n") != strings.Join(footerParts, "\n") {
		t.Errorf("width %d: parts\n%q\nwant\n%q", width, got, footerParts)
	}
}

func TestFooterBreaksBetweenParts(t *testing.T) {
	for width, want := range map[int]int{80: 4, 120: 2, 160: 2, 300: 1} {
		lines := footerLines(footerMeta(), width)
		checkFooter(t, lines, width)
		if len(lines) != want {
			t.Errorf("width %d: %d lines, want %d:\n%s", width, len(lines), want, strings.Join(lines, "\n"))
		}
	}
}

// Without a terminal the footer fits defaultFooterWidth.
func TestFooterWithoutATerminal(t *testing.T) {
	var b strings.Builder
	if err := Render(&b, &summary.Summary{Meta: footerMeta()}, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	want := strings.Join(footerLines(footerMeta(), defaultFooterWidth), "\n")
	if !strings.HasSuffix(b.String(), "\n\n"+want+"\n") {
		t.Errorf("the summary does not end with the footer fit in %d characters:\n%s\nwant it to end with\n%s", defaultFooterWidth, b.String(), want)
	}
	checkFooter(t, footerLines(footerMeta(), defaultFooterWidth), defaultFooterWidth)
}
