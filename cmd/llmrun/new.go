package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/scripts"
)

// newCommand runs "llmrun new": it writes a template to start a scenario
// from.
func newCommand(_ context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := newSubcommand("llmrun new", fmt.Sprintf(newUsage, templateList()), stdout, stderr)
	flags := cmd.flags
	name := flags.StringP("template", "t", scripts.DefaultTemplate, "the template to write: "+strings.Join(scripts.TemplateNames(), ", "))
	list := flags.Bool("list", false, "list the templates, with what each benchmarks, and write nothing")
	force := flags.BoolP("force", "f", false, "replace FILE if it exists")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	if *list {
		fmt.Fprint(stdout, templateList())
		return exitcode.OK
	}
	if flags.NArg() > 1 {
		return cmd.usageError("unexpected argument %q: one FILE at a time", flags.Arg(1))
	}
	file := scripts.DefaultScript
	if flags.NArg() == 1 {
		file = flags.Arg(0)
	}
	toStdout := file == "-"
	if toStdout {
		file = scripts.DefaultScript
	}
	src, err := scripts.TemplateSource(*name, file)
	if err != nil {
		return cmd.usageError("--template: %v", err)
	}
	if toStdout {
		if _, err := stdout.Write(src); err != nil {
			return cmd.fail(err)
		}
		return exitcode.OK
	}
	if err := scripts.WriteFile(file, src, *force); errors.Is(err, fs.ErrExist) {
		return cmd.usageError("%v; --force replaces it", err)
	} else if err != nil {
		return cmd.fail(err)
	}
	fmt.Fprintf(stdout, "wrote %s (the %s template)\nrun it: %s\nfor your editor: %s\n", file, *name, scripts.RunCommand(file), scripts.TypesCommand(file))
	return exitcode.OK
}

// templateList is the templates, a line each: what --list prints and the
// help shows.
func templateList() string {
	var b strings.Builder
	for _, t := range scripts.Templates() {
		fmt.Fprintf(&b, "  %-6s  %s", t.Name, t.Summary)
		if t.Name == scripts.DefaultTemplate {
			b.WriteString(" (the default)")
		}
		b.WriteString("\n")
	}
	return b.String()
}
