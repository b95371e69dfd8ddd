package main

import (
	"context"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// A mistyped command or flag is a usage error that names what was
// probably meant; one too far from any says only what was wrong.
func TestMistypedCommandsAndFlagsSuggestTheNearest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rnu"}, `llmrun: unknown command "rnu" (did you mean "run"?)`},
		{[]string{"comapre"}, `llmrun: unknown command "comapre" (did you mean "compare"?)`},
		{[]string{"run", "--base-ur", "http://127.0.0.1:1/v1", "s.js"}, "llmrun run: unknown flag: --base-ur (did you mean --base-url?)"},
		{[]string{"inspect", "--duraton", "1s", "s.js"}, "llmrun inspect: unknown flag: --duraton (did you mean --duration?)"},
		{[]string{"sim", "--max-num-seq", "3"}, "llmrun sim: unknown flag: --max-num-seq (did you mean --max-num-seqs?)"},
		{[]string{"bench", "--num-promts", "3"}, "llmrun bench: unknown flag: --num-promts (did you mean --num-prompts?)"},
		{[]string{"compare", "--treshold", "3", "a.json", "b.json"}, "llmrun compare: unknown flag: --treshold (did you mean --threshold?)"},
		{[]string{"trend", "--influx", "http://127.0.0.1:1"}, "llmrun trend: unknown flag: --influx (did you mean --influxdb?)"},
		{[]string{"run", "--throughput", "9", "s.js"}, "llmrun run: unknown flag: --throughput\n"},
		{[]string{"frobnicate"}, "llmrun: unknown command \"frobnicate\"\n"},
	} {
		code, _, stderr := cli(t, context.Background(), nil, tc.args...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitcode.Usage, tc.want)
		}
	}
}

// Every command's help ends its text with an example of the command.
func TestEveryHelpShowsAnExample(t *testing.T) {
	t.Parallel()
	for _, name := range commands {
		code, stdout, _ := cli(t, context.Background(), nil, name, "--help")
		text, _, _ := strings.Cut(stdout, "\nFlags:\n")
		_, examples, found := strings.Cut(text, "\nExample")
		if code != exitcode.OK || !found || !strings.Contains(examples, "\n  llmrun "+name+" ") && !strings.HasSuffix(strings.TrimSpace(examples), "llmrun "+name) {
			t.Errorf("llmrun %s --help (exit %d) shows no example of the command before its flags:\n%s", name, code, text)
		}
	}
}

// The names a mistyped command is matched against are the commands run
// dispatches: each answers its help.
func TestHintedCommandsAreCommands(t *testing.T) {
	t.Parallel()
	for _, name := range commands {
		if code, _, stderr := cli(t, context.Background(), nil, name, "--help"); code != exitcode.OK || strings.Contains(stderr, "unknown command") {
			t.Errorf("%s --help: exit %d, stderr %q", name, code, stderr)
		}
	}
}
