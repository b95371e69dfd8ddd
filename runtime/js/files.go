package js

import (
	"fmt"
	"os"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/llmrun/llmrun/internal/capped"
)

// MaxScriptSize bounds the script file and each file it imports.
const MaxScriptSize = 16 << 20

// MaxOpenSize bounds a file the script reads with open().
const MaxOpenSize = 256 << 20

// ReadScript reads a script file: a regular file (or a named pipe) of at
// most MaxScriptSize bytes. The error names the file and the cap.
func ReadScript(path string) ([]byte, error) {
	src, err := capped.ReadFile(path, MaxScriptSize)
	if err != nil {
		return nil, fmt.Errorf("reading the script: %w", err)
	}
	return src, nil
}

// cappedImports makes esbuild refuse an imported file that is not a
// regular file or is larger than MaxScriptSize, before it reads it; it
// then loads the file as it would have.
var cappedImports = api.Plugin{
	Name: "llmrun-capped-imports",
	Setup: func(b api.PluginBuild) {
		b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: "file"},
			func(args api.OnLoadArgs) (api.OnLoadResult, error) {
				info, err := os.Stat(args.Path)
				switch {
				case err != nil:
					return api.OnLoadResult{}, err
				case !info.Mode().IsRegular():
					return api.OnLoadResult{}, fmt.Errorf("%s is not a regular file", args.Path)
				case info.Size() > MaxScriptSize:
					return api.OnLoadResult{}, fmt.Errorf("%s is larger than %s, the most llmrun reads of a script file", args.Path, capped.Size(MaxScriptSize))
				}
				return api.OnLoadResult{}, nil
			})
	},
}
