// Package scripts holds the scripts shipped inside the llmrun binary: the
// stock scenarios, run as "llmrun run stock:NAME" and configured with -e
// KEY=VALUE, and the templates "llmrun new" writes (templates.go).
package scripts

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Prefix marks a stock scenario on the command line: "stock:serving-point".
const Prefix = "stock:"

//go:embed *.js lib/*.js
var files embed.FS

// Files are the stock scenarios and their library (lib/), where their
// relative imports are found.
func Files() fs.FS { return files }

// Names lists the stock scenarios, sorted.
func Names() []string {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err) // the embedded directory always reads
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, strings.TrimSuffix(e.Name(), ".js"))
		}
	}
	sort.Strings(names)
	return names
}

// Source returns the source of the named stock scenario (with or without
// the prefix and the .js extension).
func Source(name string) ([]byte, error) {
	name = strings.TrimSuffix(strings.TrimPrefix(name, Prefix), ".js")
	src, err := files.ReadFile(name + ".js")
	if err != nil {
		return nil, fmt.Errorf("no stock scenario %q (stock scenarios: %s)", name, strings.Join(Names(), ", "))
	}
	return src, nil
}
