package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/modules/typings"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// typesCommand runs "llmrun types [--force] [DIR]".
func typesCommand(args []string, stdout, stderr io.Writer) int {
	cmd := newSubcommand("llmrun types", typesUsage, stdout, stderr)
	force := cmd.flags.Bool("force", false, "replace "+typings.DeclarationsFile+" and "+typings.ConfigFile+" in DIR when they differ from this llmrun's")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	dirs := cmd.flags.Args()
	if len(dirs) == 1 && dirs[0] == "-" {
		dirs = nil // stdout, as for llmrun new: not a directory named -
	}
	switch {
	case len(dirs) > 1:
		return cmd.usageError("one directory at most, got %d arguments", len(dirs))
	case len(dirs) == 0 && *force:
		return cmd.usageError("--force replaces files in DIR, and none is given")
	case len(dirs) == 0:
		if _, err := stdout.Write(typings.Declarations()); err != nil {
			return cmd.fail(err)
		}
		return exitcode.OK
	default:
		written, note, err := typings.Write(dirs[0], *force)
		for _, w := range written {
			fmt.Fprintf(stdout, "%s %s\n", w.Action, w.Path)
		}
		if errors.Is(err, typings.ErrDiffers) {
			return cmd.usageError("%v", err) // as llmrun new: the remedy is a flag
		}
		if err != nil {
			return cmd.fail(err)
		}
		if note != "" {
			fmt.Fprintf(stderr, "llmrun types: %s\n", note)
		}
		return exitcode.OK
	}
}
