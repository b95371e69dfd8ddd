package vllmbench

import (
	"os"
	"strings"
	"testing"
)

// docs/bench.md's flag table has a row for every flag of vllm bench
// serve, saying what llmrun bench does with it, and no row for a flag
// llmrun does not know.
func TestFlagTableInDocs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/bench.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // flag → its use, as the table says
	for line := range strings.SplitSeq(string(b), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `--") || len(cells) < 3 {
			continue
		}
		rows[strings.Trim(cells[0], "|` ")] = cells[1]
	}
	uses := map[Use]string{Implemented: "implemented", Ignored: "ignored", Refused: "refused"}
	seen := map[string]bool{}
	for _, f := range Flags {
		if seen[f.Name] {
			t.Errorf("--%s is listed twice", f.Name)
		}
		seen[f.Name] = true
		if got, ok := rows["--"+f.Name]; !ok || got != uses[f.Use] {
			t.Errorf("docs/bench.md: --%s row says %q, want %q", f.Name, got, uses[f.Use])
		}
		if f.Use != Implemented && f.Why == "" {
			t.Errorf("--%s is %s without saying why", f.Name, uses[f.Use])
		}
	}
	for name := range rows {
		if !seen[strings.TrimPrefix(name, "--")] {
			t.Errorf("docs/bench.md has a row for %s, which is not one of vLLM's flags", name)
		}
	}
}
