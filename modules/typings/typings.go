// Package typings holds the TypeScript declarations of llmrun's script
// API: the modules a script imports ('llm', 'llmrun', 'llmrun/config',
// 'data', 'metrics') and its globals (__ENV, __VU, __ITER, open,
// console), in llmrun.d.ts, with the jsconfig.json that makes an editor
// read them for the .js and .ts scripts of its directory. "llmrun types"
// prints or writes them (Write). Its tests check the declarations with
// the TypeScript compiler against every example, stock script and
// template, and against the exports the runtime registers.
package typings

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The files' names, as Write writes them.
const (
	// DeclarationsFile declares the modules and globals.
	DeclarationsFile = "llmrun.d.ts"
	// ConfigFile makes a directory a project whose scripts editors check
	// against DeclarationsFile (VS Code reads a jsconfig.json for .ts
	// files too, when no tsconfig.json is beside it).
	ConfigFile = "jsconfig.json"
)

//go:embed llmrun.d.ts jsconfig.json
var embedded embed.FS

// A File is one file written beside scripts.
type File struct {
	Name string
	Data []byte
}

// Files are the declarations and the editor's configuration, in that
// order.
func Files() []File {
	return []File{{DeclarationsFile, Declarations()}, {ConfigFile, read(ConfigFile)}}
}

// Declarations is the text of llmrun.d.ts.
func Declarations() []byte { return read(DeclarationsFile) }

func read(name string) []byte {
	b, err := embedded.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: only a misspelt name gets here
	}
	return b
}

// An Action is what Write did with one file.
type Action string

// Write's actions.
const (
	Wrote    Action = "wrote"    // the file was not there
	Replaced Action = "replaced" // it was, with other content (force)
	Kept     Action = "kept"     // it was, with the same content
)

// A Written file: its path and what Write did.
type Written struct {
	Path   string
	Action Action
}

// ErrDiffers is the error of a file that exists with other content, when
// Write was not told to replace it.
var ErrDiffers = errors.New("exists with other content")

// Write writes Files into dir, creating it when missing. A file already
// there with the same content is kept; with other content it is replaced
// when force is set, and is otherwise an error wrapping ErrDiffers that
// names it, and then no file is written. A note, when not empty, says
// what an editor will make of the result (a tsconfig.json beside it,
// which editors read instead of jsconfig.json).
func Write(dir string, force bool) (written []Written, note string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("creating the directory for the declarations: %w", err)
	}
	files := Files()
	actions := make([]Action, len(files))
	for i, f := range files {
		path := filepath.Join(dir, f.Name)
		old, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			actions[i] = Wrote
		case err != nil:
			return nil, "", fmt.Errorf("reading %s: %w", path, err)
		case bytes.Equal(old, f.Data):
			actions[i] = Kept
		case !force:
			return nil, "", fmt.Errorf("%s %w: --force replaces it%s", path, ErrDiffers, keepHint(f.Name))
		default:
			actions[i] = Replaced
		}
	}
	for i, f := range files {
		path := filepath.Join(dir, f.Name)
		if actions[i] != Kept {
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				return written, "", fmt.Errorf("writing %s: %w", path, err)
			}
		}
		written = append(written, Written{path, actions[i]})
	}
	if tsconfig := filepath.Join(dir, "tsconfig.json"); exists(tsconfig) {
		note = fmt.Sprintf("%s exists: editors read it instead of %s, so name %s in its \"include\" or \"files\"", tsconfig, ConfigFile, DeclarationsFile)
	}
	return written, note, nil
}

// keepHint says how to keep one's own file of that name instead.
func keepHint(name string) string {
	if name == ConfigFile {
		return fmt.Sprintf(", or keep yours and let it include %s", DeclarationsFile)
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
