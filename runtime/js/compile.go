package js

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// wrapperParams are the parameters of the function the compiled program
// evaluates to: the CommonJS module scope.
const wrapperParams = "module, exports, require"

// bundleName names esbuild's output (never written), put beside the script
// so that the source map's paths are relative to the script's directory.
const bundleName = "llmrun-bundle.js"

// Script is a compiled script: one goja program shared by every VU's
// runtime, and what is needed to report errors against the original files.
type Script struct {
	filename string
	dir      string // absolute
	builtIn  bool   // the script is built into llmrun, not a file
	program  *goja.Program
	// sources are the script's files by the name goja reports in
	// positions, which is their path joined to the script's directory.
	sources map[string]*sourceFile
	// imports are the names the script imports by name from each Go
	// module (namedImports), which its require checks.
	imports map[string][]string
}

// Compile transforms a script with esbuild, once: TypeScript types are
// stripped (by the extension: .ts, .mts or .cts; anything else is
// JavaScript), ES modules become CommonJS, syntax newer than goja's is
// lowered, and relative imports are bundled in from disk, relative to the
// script's directory. Bare imports stay require() calls, resolved per VU by
// Instantiate. The code runs in strict mode, as ES modules do. filename is
// the script's path (relative to the working directory or absolute) and
// names it in errors; src is its content.
//
// A syntax error, or an import that cannot be resolved, is a *ScriptError.
func Compile(filename string, src []byte) (*Script, error) {
	return CompileFS(filename, src, nil)
}

// CompileFS is Compile for a script whose relative imports are files of
// fsys (a script built into the binary and its library), not of the disk;
// a nil fsys is the disk.
func CompileFS(filename string, src []byte, fsys fs.FS) (*Script, error) {
	abs, err := filepath.Abs(filename)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", filename, err)
	}
	dir := filepath.Dir(abs)
	opts := buildOptions(filename, dir, src)
	if fsys != nil {
		opts.Plugins = append(opts.Plugins, embeddedImports(fsys))
	}
	res := api.Build(opts)
	if len(res.Errors) > 0 {
		return nil, buildError(filename, res.Errors)
	}
	code, m, err := bundleOutputs(res.OutputFiles)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", filename, err)
	}
	gojaMap, err := gojaSourceMap(m)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", filename, err)
	}
	code = cheaperInterop(code)
	s := &Script{filename: filename, dir: dir, builtIn: fsys != nil, sources: sourceFiles(filename, dir, m, fsys == nil), imports: namedImports(code)}
	if s.program, err = compileProgram(filepath.Join(filepath.Dir(filename), bundleName), code, gojaMap); err != nil {
		return nil, s.syntaxError(err)
	}
	return s, nil
}

// Files are the absolute paths of the script's files on disk, sorted:
// the script and every file it imports (what a copy of the script needs
// to compile elsewhere); none for a script built into llmrun.
func (s *Script) Files() []string {
	var paths []string
	for _, f := range s.sources {
		if f.path != "" {
			paths = append(paths, f.path)
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

func buildOptions(filename, dir string, src []byte) api.BuildOptions {
	return api.BuildOptions{
		Stdin: &api.StdinOptions{
			Contents:   string(src),
			ResolveDir: dir,
			// The base name makes the entry's path in the source map
			// relative to dir, like every other file's.
			Sourcefile: filepath.Base(filename),
			Loader:     loaderFor(filename),
		},
		AbsWorkingDir: dir,
		Outfile:       filepath.Join(dir, bundleName),
		Bundle:        true,
		Plugins:       []api.Plugin{goModules, cappedImports},
		Platform:      api.PlatformNeutral,
		Format:        api.FormatCommonJS,
		Target:        api.ES2022,
		Supported:     gojaSyntaxGaps,
		KeepNames:     true,
		LegalComments: api.LegalCommentsNone,
		// A linked map, handed to goja's parser by compileProgram. The
		// banner and footer are part of esbuild's output, so its map
		// accounts for the wrapper's line.
		Sourcemap: api.SourceMapLinked,
		Banner:    map[string]string{"js": "(function (" + wrapperParams + ") {"},
		Footer:    map[string]string{"js": "})"},
		LogLevel:  api.LogLevelSilent,
	}
}

// goModules leaves bare imports ('llm', not './llm.js') to require() at
// run time, where the VU resolves them to Go modules. (esbuild's own
// Packages option needs the script's directory to exist, which an embedded
// script's does not.)
var goModules = api.Plugin{
	Name: "llmrun-modules",
	Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: `^[^./]|^\.[^./]|^\.\.[^/]`},
			func(args api.OnResolveArgs) (api.OnResolveResult, error) {
				return api.OnResolveResult{Path: args.Path, External: true}, nil
			})
	},
}

// embeddedNamespace is esbuild's namespace of the files of an embedded
// script's fs.FS.
const embeddedNamespace = "embedded"

// embeddedImports resolves the relative imports of a script built into the
// binary against fsys, its directory, so that stock scripts can share a
// library of their own.
func embeddedImports(fsys fs.FS) api.Plugin {
	return api.Plugin{
		Name: "llmrun-embedded",
		Setup: func(b api.PluginBuild) {
			b.OnResolve(api.OnResolveOptions{Filter: `^\.\.?/`},
				func(args api.OnResolveArgs) (api.OnResolveResult, error) {
					base := "."
					if args.Namespace == embeddedNamespace {
						base = path.Dir(args.Importer)
					}
					p := path.Join(base, args.Path)
					if _, err := fs.Stat(fsys, p); err != nil {
						return api.OnResolveResult{}, fmt.Errorf("%s is not among the scripts built into llmrun", args.Path)
					}
					return api.OnResolveResult{Path: p, Namespace: embeddedNamespace}, nil
				})
			b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: embeddedNamespace},
				func(args api.OnLoadArgs) (api.OnLoadResult, error) {
					src, err := fs.ReadFile(fsys, args.Path)
					if err != nil {
						return api.OnLoadResult{}, err
					}
					contents := string(src)
					return api.OnLoadResult{Contents: &contents, Loader: loaderFor(args.Path)}, nil
				})
		},
	}
}

// gojaSyntaxGaps is the ES2022 syntax goja does not parse; esbuild lowers
// async iteration to generators and turns regular expression literals with
// the d flag into RegExp calls, which fail only when run.
var gojaSyntaxGaps = map[string]bool{
	"async-generator":      false,
	"for-await":            false,
	"regexp-match-indices": false,
}

func loaderFor(filename string) api.Loader {
	switch strings.ToLower(filepath.Ext(filename)) {
	case ".ts", ".mts", ".cts":
		return api.LoaderTS
	default:
		return api.LoaderJS
	}
}

// bundleOutputs picks the code and the source map out of esbuild's output.
func bundleOutputs(files []api.OutputFile) (code string, m sourceMap, err error) {
	var mapJSON []byte
	for _, f := range files {
		switch filepath.Base(f.Path) {
		case bundleName:
			code = string(f.Contents)
		case bundleName + ".map":
			mapJSON = f.Contents
		}
	}
	if code == "" || mapJSON == nil {
		return "", m, errors.New("esbuild produced no code or no source map")
	}
	if err := json.Unmarshal(mapJSON, &m); err != nil {
		return "", m, fmt.Errorf("reading esbuild's source map: %w", err)
	}
	return code, m, nil
}

// compileProgram compiles esbuild's output, in strict mode as ES modules
// are, giving goja the source map so that positions in stacks and errors
// name the original files. name is the output's path beside the script:
// goja resolves the map's paths against it, and names positions the map
// does not cover (esbuild's helpers) with it.
func compileProgram(name, code string, sourceMap []byte) (*goja.Program, error) {
	loadMap := func(string) ([]byte, error) { return sourceMap, nil }
	ast, err := goja.Parse(name, code, parser.WithSourceMapLoader(loadMap))
	if err != nil {
		return nil, err
	}
	return goja.CompileAST(ast, true)
}
