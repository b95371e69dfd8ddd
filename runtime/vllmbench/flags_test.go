package vllmbench

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
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

// AddFlags registers every flag of vllm bench serve, so that vLLM's
// command lines parse, and no flag that is not one of vLLM's (llmrun
// bench's own are its command's).
func TestAddFlagsTakesEveryVLLMFlag(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	AddFlags(fs)
	for _, vf := range Flags {
		if fs.Lookup(vf.Name) == nil {
			t.Errorf("--%s (%v) is not a flag of llmrun bench", vf.Name, vf.Use)
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := LookupFlag(f.Name); !ok {
			t.Errorf("AddFlags registers --%s, which is not one of vLLM's flags", f.Name)
		}
	})
}

func TestExpandMultiValued(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"--goodput ttft:5 tpot:6 --seed 1":      "--goodput ttft:5 --goodput tpot:6 --seed 1",
		"--goodput=ttft:5 tpot:6":               "--goodput=ttft:5 --goodput tpot:6",
		"--metadata a=1 b=2 c=3":                "--metadata a=1 --metadata b=2 --metadata c=3",
		"--model m --goodput e2el:9":            "--model m --goodput e2el:9",
		"--goodput ttft:5 --metadata a=1 stray": "--goodput ttft:5 --metadata a=1 --metadata stray",
	} {
		if got := strings.Join(ExpandMultiValued(strings.Fields(in)), " "); got != want {
			t.Errorf("ExpandMultiValued(%s) = %s, want %s", in, got, want)
		}
	}
}
