package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/spelling"
)

// helpCommand is "llmrun help [COMMAND]" (and --help, -h): the usage
// alone; COMMAND's help, which is what "llmrun COMMAND --help" prints; or
// help's own for "llmrun help --help".
func helpCommand(ctx context.Context, cmd string, rest []string, stdout, stderr io.Writer, getenv func(string) string) int {
	switch {
	case len(rest) == 0 || cmd != "help" && isHelpFlag(rest[0]):
		fmt.Fprint(stdout, usage)
		return exitcode.OK
	case isHelpFlag(rest[0]) || rest[0] == "help":
		fmt.Fprint(stdout, helpUsage)
		return exitcode.OK
	case !slices.Contains(commands, rest[0]):
		return unknownCommand(rest[0], stderr)
	}
	return run(ctx, []string{rest[0], "--help"}, stdout, stderr, getenv)
}

func isHelpFlag(arg string) bool { return arg == "-h" || arg == "--help" }

// unknownCommand says that cmd is none of the commands, naming the nearest
// when it is a slip of one, and returns exitcode.Usage.
func unknownCommand(cmd string, stderr io.Writer) int {
	hint := ""
	if near := spelling.Nearest(cmd, commands); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	fmt.Fprintf(stderr, "llmrun: unknown command %q%s\nRun 'llmrun --help' for usage.\n", cmd, hint)
	return exitcode.Usage
}
