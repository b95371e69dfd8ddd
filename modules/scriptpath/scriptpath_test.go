package scriptpath_test

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/llmrun/llmrun/internal/filetest"
	"github.com/llmrun/llmrun/modules/scriptpath"
)

// TestResolve runs from a working directory that is not the script's:
// each kind of path is found where the rule says, warns when it says,
// and tells FileRead the file found.
func TestResolve(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	project := filepath.Join(root, "project")
	filetest.Write(t, work, map[string]string{"cwd-only.txt": "", "both.txt": "", "typed.txt": "", "data/typed.txt": "", "data/cwd-only.txt": ""})
	filetest.Write(t, project, map[string]string{"beside.txt": "", "both.txt": "", "typed.txt": "", "data/typed.txt": "", "lib/mod-only.txt": ""})
	script := filepath.Join(project, "bench.js")
	t.Chdir(work)

	tests := []struct {
		name     string
		builtIn  bool
		env      map[string]string
		dir      string // ResolveFrom's; "" for the script's
		path     string
		want     string // the path found; "" when an error is wanted
		warning  string // a part of the one warning wanted; "" for none
		wantErr  []string
		wantRead bool
		// formerlyWorkDir resolves through FormerlyWorkDir.
		formerlyWorkDir bool
	}{
		{name: "beside the script", path: "beside.txt", want: filepath.Join(project, "beside.txt")},
		{name: "beside the script wins", path: "both.txt", want: filepath.Join(project, "both.txt")},
		{name: "beside the calling module", dir: filepath.Join(project, "lib"), path: "mod-only.txt", want: filepath.Join(project, "lib", "mod-only.txt")},
		{name: "absolute", path: filepath.Join(work, "both.txt"), want: filepath.Join(work, "both.txt")},
		{name: "the working directory only, deprecated", path: "cwd-only.txt", want: "cwd-only.txt",
			warning: `f("cwd-only.txt") in ` + script + `: cwd-only.txt was found relative to the working directory (` + filepath.Join(work, "cwd-only.txt") +
				`), not to the script's directory (there is no ` + filepath.Join(project, "cwd-only.txt") + `). This is deprecated: a future version resolves paths only against the script. Name it "../work/cwd-only.txt" (relative to the script's directory) or "` + filepath.Join(work, "cwd-only.txt") + `"`},
		{name: "the working directory only, from a module", dir: filepath.Join(project, "lib"), path: "cwd-only.txt", want: "cwd-only.txt",
			warning: `not to the directory of the module that names it (there is no ` + filepath.Join(project, "lib", "cwd-only.txt") +
				`). This is deprecated: a future version resolves paths only against the script. Name it "../../work/cwd-only.txt" (relative to the directory of the module that names it) or "` + filepath.Join(work, "cwd-only.txt") + `"`},
		{name: "formerly the working directory's, beside the script and there", formerlyWorkDir: true, path: "both.txt", want: filepath.Join(project, "both.txt"),
			warning: `f("both.txt") in ` + script + `: reads ` + filepath.Join(project, "both.txt") + `, relative to the script's directory; before this version it read ` +
				filepath.Join(work, "both.txt") + `, another file, relative to the working directory. Relative paths now resolve against the script: name that one "../work/both.txt" (relative to the script's directory) or "` + filepath.Join(work, "both.txt") + `"`},
		{name: "formerly the working directory's, beside the script only", formerlyWorkDir: true, path: "beside.txt", want: filepath.Join(project, "beside.txt")},
		{name: "formerly the working directory's, there only", formerlyWorkDir: true, path: "cwd-only.txt", want: "cwd-only.txt", warning: "cwd-only.txt was found relative to the working directory"},
		{name: "formerly the working directory's, typed on the command line", formerlyWorkDir: true, env: map[string]string{"DATA": "typed.txt"}, path: "typed.txt", want: "typed.txt"},
		{name: "typed on the command line: the working directory first", env: map[string]string{"DATA": "typed.txt"}, path: "typed.txt", want: "typed.txt"},
		{name: "typed on the command line, beside the script", env: map[string]string{"DATA": "beside.txt"}, path: "beside.txt", want: filepath.Join(project, "beside.txt")},
		{name: "typed on the command line, the working directory only", env: map[string]string{"DATA": "cwd-only.txt"}, path: "cwd-only.txt", want: "cwd-only.txt"},
		{name: "below a directory typed on the command line, the working directory only", env: map[string]string{"DIR": "data"}, path: "data/cwd-only.txt", want: "data/cwd-only.txt"},
		{name: "below a directory typed with its slash, the working directory only", env: map[string]string{"DIR": "data/"}, path: "data/cwd-only.txt", want: "data/cwd-only.txt"},
		// A variable whose value is by chance a directory's name reads no
		// other file.
		{name: "below a directory typed on the command line, beside the script too", env: map[string]string{"DIR": "data"}, path: "data/typed.txt", want: filepath.Join(project, "data", "typed.txt")},
		{name: "below a name typed on the command line, not a directory of it", env: map[string]string{"DIR": "dat"}, path: "data/cwd-only.txt", want: "data/cwd-only.txt", warning: "data/cwd-only.txt was found relative to the working directory"},
		{name: "built in: the working directory", builtIn: true, path: "cwd-only.txt", want: "cwd-only.txt"},
		{name: "built in: nothing beside it", builtIn: true, path: "beside.txt",
			wantErr: []string{`f("beside.txt"): no such file: looked for beside.txt in the working directory, ` + work, "is built into llmrun"}},
		{name: "missing", path: "missing.txt",
			wantErr: []string{`f("missing.txt") in ` + script + `: no such file: looked for ` + filepath.Join(project, "missing.txt") +
				` (relative to the script's directory) and missing.txt (relative to the working directory, ` + work + `)`}},
		{name: "typed on the command line, missing: the working directory named first", env: map[string]string{"DATA": "missing.txt"}, path: "missing.txt",
			wantErr: []string{`f("missing.txt") in ` + script + `: no such file: looked for missing.txt (relative to the working directory, ` + work + `) and ` +
				filepath.Join(project, "missing.txt") + ` (relative to the script's directory)`}},
		{name: "missing absolute", path: filepath.Join(work, "missing.txt"), wantErr: []string{filepath.Join(work, "missing.txt") + ": no such file"}},
		{name: "empty", path: "", wantErr: []string{`f(""): no path given`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warnings, read []string
			r := scriptpath.New(scriptpath.Config{Script: script, BuiltIn: tt.builtIn, Env: tt.env,
				Warn: func(msg string) { warnings = append(warnings, msg) }, FileRead: func(path string) { read = append(read, path) }})
			if tt.formerlyWorkDir {
				r = r.FormerlyWorkDir()
			}
			// Twice: the second warns no more.
			for range 2 {
				got, err := r.ResolveFrom(tt.dir, `f("`+tt.path+`")`, tt.path)
				if tt.wantErr != nil {
					for _, want := range tt.wantErr {
						if err == nil || !strings.Contains(err.Error(), want) {
							t.Fatalf("error %v, want one containing %q", err, want)
						}
					}
					continue
				}
				if err != nil || got != tt.want {
					t.Fatalf("got %q, %v; want %q", got, err, tt.want)
				}
			}
			switch {
			case tt.warning == "" && warnings != nil:
				t.Errorf("warnings %q, want none", warnings)
			case tt.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warning)):
				t.Errorf("warnings %q, want one containing %q", warnings, tt.warning)
			}
			if want := []string{tt.want, tt.want}; tt.wantErr == nil && !slices.Equal(read, want) {
				t.Errorf("FileRead told %q, want %q", read, want)
			}
			if tt.wantErr != nil && read != nil {
				t.Errorf("FileRead told %q of a file not found", read)
			}
		})
	}
}

// A file found beside a script named by a relative path is named
// relative to the working directory too, as the script is.
func TestResolveKeepsTheScriptsPathAsGiven(t *testing.T) {
	root := t.TempDir()
	filetest.Write(t, root, map[string]string{"project/beside.txt": "", "work/cwd-only.txt": ""})
	t.Chdir(filepath.Join(root, "work"))
	var warnings []string
	r := scriptpath.New(scriptpath.Config{Script: "../project/bench.js", Warn: func(msg string) { warnings = append(warnings, msg) }})
	if got, err := r.Resolve("f", "beside.txt"); err != nil || got != filepath.Join("..", "project", "beside.txt") {
		t.Errorf("got %q, %v; want ../project/beside.txt", got, err)
	}
	if _, err := r.Resolve("f", "cwd-only.txt"); err != nil || len(warnings) != 1 ||
		!strings.Contains(warnings[0], `not to the script's directory (there is no ../project/cwd-only.txt)`) || !strings.Contains(warnings[0], `Name it "../work/cwd-only.txt"`) {
		t.Errorf("error %v, warnings %q; want one naming the script's directory as given and the path relative to it", err, warnings)
	}
}

// Where the script's directory is the working directory, the file beside
// it is the one an API of the working directory read before: no warning.
// The warning of a file told, through FormerlyWorkDir or not, is told once.
func TestFormerlyWorkDirWarnsOfAnotherFileOnce(t *testing.T) {
	root := t.TempDir()
	filetest.Write(t, root, map[string]string{"project/both.txt": "", "work/both.txt": ""})
	t.Chdir(filepath.Join(root, "project"))
	var warnings []string
	r := scriptpath.New(scriptpath.Config{Script: "bench.js", Warn: func(msg string) { warnings = append(warnings, msg) }})
	if got, err := r.FormerlyWorkDir().Resolve("f", "both.txt"); err != nil || got != "both.txt" || warnings != nil {
		t.Errorf("got %q, %v, warnings %q; want both.txt without a warning", got, err, warnings)
	}

	r = scriptpath.New(scriptpath.Config{Script: filepath.Join(root, "project", "bench.js"), Warn: func(msg string) { warnings = append(warnings, msg) }})
	t.Chdir(filepath.Join(root, "work"))
	for range 3 {
		if _, err := r.FormerlyWorkDir().Resolve("f", "both.txt"); err != nil {
			t.Fatal(err)
		}
	}
	if len(warnings) != 1 {
		t.Errorf("warnings %q, want one, though three calls each took a FormerlyWorkDir of their own", warnings)
	}
	if nilResolver := (*scriptpath.Resolver)(nil); nilResolver.FormerlyWorkDir() != nil {
		t.Error("a nil Resolver's FormerlyWorkDir is not nil")
	}
}

// A file missing where the script's directory is the working directory
// is named once, not as two places.
func TestMissingInTheWorkingDirectoryIsNamedOnce(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	for _, script := range []string{"bench.js", filepath.Join(work, "bench.js")} {
		r := scriptpath.New(scriptpath.Config{Script: script})
		_, err := r.Resolve(`f("missing.txt")`, "missing.txt")
		want := `f("missing.txt") in ` + script + `: no such file: looked for ` + filepath.Join(filepath.Dir(script), "missing.txt") +
			` (relative to the script's directory, which is the working directory)`
		if err == nil || err.Error() != want {
			t.Errorf("script %s: error %v, want %s", script, err, want)
		}
	}
}

// Many VUs resolving at once tell each warning once (run under -race).
func TestWarnsOnceAcrossVUs(t *testing.T) {
	root := t.TempDir()
	filetest.Write(t, root, map[string]string{"work/cwd-only.txt": "", "work/both.txt": "", "project/both.txt": ""})
	t.Chdir(filepath.Join(root, "work"))
	var warnings, read atomic.Int64
	r := scriptpath.New(scriptpath.Config{Script: filepath.Join(root, "project", "bench.js"),
		Warn: func(string) { warnings.Add(1) }, FileRead: func(string) { read.Add(1) }})
	const vus = 32
	var wg sync.WaitGroup
	for range vus {
		wg.Go(func() {
			if _, err := r.Resolve("f", "cwd-only.txt"); err != nil {
				t.Error(err)
			}
			if _, err := r.FormerlyWorkDir().Resolve("g", "both.txt"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if warnings.Load() != 2 || read.Load() != 2*vus {
		t.Errorf("%d warnings and %d files told, want 2 (one a file) and %d", warnings.Load(), read.Load(), 2*vus)
	}
}

// A nil Resolver resolves against the working directory and tells no one.
func TestNilResolver(t *testing.T) {
	work := t.TempDir()
	filetest.Write(t, work, map[string]string{"here.txt": ""})
	t.Chdir(work)
	var r *scriptpath.Resolver
	if got, err := r.Resolve("f", "here.txt"); err != nil || got != "here.txt" {
		t.Errorf("got %q, %v; want here.txt", got, err)
	}
	if _, err := r.Resolve("f", "gone.txt"); err == nil || !strings.Contains(err.Error(), "f: no such file: looked for gone.txt in the working directory, "+work) || strings.Contains(err.Error(), "built into") {
		t.Errorf("error %v, want one naming the working directory", err)
	}
}

// A tokenizer spec is an encoding or a model id as given, else a file
// found as any path is.
func TestResolveTokenizer(t *testing.T) {
	project := t.TempDir()
	filetest.Write(t, project, map[string]string{"tok/tokenizer.json": "{}"})
	t.Chdir(t.TempDir())
	r := scriptpath.New(scriptpath.Config{Script: filepath.Join(project, "bench.js")})
	for _, tt := range []struct{ spec, want, wantErr string }{
		{spec: "cl100k_base", want: "cl100k_base"},
		{spec: "Qwen/Qwen2.5-0.5B", want: "Qwen/Qwen2.5-0.5B"},
		{spec: "tok/tokenizer.json", want: filepath.Join(project, "tok", "tokenizer.json")},
		{spec: "tok", want: filepath.Join(project, "tok")},
		{spec: "nope.json", wantErr: `unknown tokenizer "nope.json": want one of cl100k_base`},
	} {
		got, err := r.ResolveTokenizer("tokenizer", tt.spec)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "no such file: looked for "+filepath.Join(project, "nope.json"))):
			t.Errorf("%s: error %v, want one containing %q and where it looked", tt.spec, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("%s: got %q, %v; want %q", tt.spec, got, err, tt.want)
		}
	}
}
