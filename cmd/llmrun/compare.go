package main

import (
	"context"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/runtime/results"
)

// compareCommand runs "llmrun compare".
func compareCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := newSubcommand("llmrun compare", compareUsage, stdout, stderr)
	var f gateFlags
	f.register(cmd.flags, "threshold")
	var scenario string
	cmd.flags.StringVar(&scenario, "scenario", "", "compare this scenario's figures (default: the whole runs')")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	switch {
	case cmd.flags.NArg() != 2:
		return cmd.usageError("want two result files, the baseline's and the current run's; got %d", cmd.flags.NArg())
	case cmd.flags.Changed("scenario") && scenario == "":
		return cmd.usageError("--scenario: want a scenario's name (leave the flag out to compare the whole runs)")
	}
	gate, err := f.gate()
	if err != nil {
		return cmd.usageError("%v", err)
	}
	c, err := results.CompareFiles(cmd.flags.Arg(0), cmd.flags.Arg(1), scenario, gate)
	if err != nil {
		return cmd.fail(err)
	}
	if c.Note != "" {
		fmt.Fprintf(stderr, "llmrun compare: note: %s\n", c.Note)
	}
	return f.print(cmd, stdout, getenv, "printing the comparison", c)
}
