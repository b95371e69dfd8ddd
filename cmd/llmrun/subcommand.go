package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/spelling"
)

// subcommand is what the commands that read and write files (trend,
// compare, merge, report) share: a flag set whose --help prints the
// command's usage text and flags on stdout, and errors that say on stderr
// what was wrong and where help is.
type subcommand struct {
	name   string // "llmrun compare"
	flags  *pflag.FlagSet
	stderr io.Writer
}

func newSubcommand(name, usage string, stdout, stderr io.Writer) *subcommand {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { printHelp(stdout, usage, fs) }
	return &subcommand{name: name, flags: fs, stderr: stderr}
}

// printHelp is what every command's --help, -h and "llmrun help COMMAND"
// print: its usage text and its flags, on stdout with exit 0 as "llmrun
// help" does, so that they can be paged or searched ("| less", "| grep").
// The flag set's own output stays stderr, for pflag's warnings.
func printHelp(stdout io.Writer, usage string, fs *pflag.FlagSet) {
	fmt.Fprint(stdout, usage)
	fmt.Fprint(stdout, fs.FlagUsages())
}

// parse parses args; when ok is false the command ends at once with code:
// 0 after --help, exitcode.Usage after a bad flag.
func (c *subcommand) parse(args []string) (code int, ok bool) {
	if err := c.flags.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitcode.OK, false
		}
		return c.usageError("%v", spelling.FlagHint(err, c.flags)), false
	}
	return exitcode.OK, true
}

// usageError prints what was wrong with the command line and returns
// exitcode.Usage.
func (c *subcommand) usageError(format string, args ...any) int {
	fmt.Fprintf(c.stderr, c.name+": "+format+"\nRun '%s --help' for usage.\n", append(args, c.name)...)
	return exitcode.Usage
}
