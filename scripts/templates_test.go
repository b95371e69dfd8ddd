package scripts

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/js"
	"github.com/llmrun/llmrun/runtime/runner"
)

// shortRun is the environment that shortens every template's run: a few
// seconds of each workload, a second for each level of the sweep.
var shortRun = map[string]string{"DURATION": "3s", "STEP": "1s"}

// Every template runs as written against the built-in simulator, started
// by the runner as "llmrun run script.js" starts it, and passes: exit 0,
// every threshold it declares judged on samples and passed, requests
// sent and none failed, every check passed. The runs go in parallel,
// each with its own simulator: the thresholds' bounds are several times
// what the simulator gives on a loaded machine. The seed is fixed: a 3 s
// Poisson scenario of another seed may draw few arrivals beyond its
// warmup.
func TestTemplatesRunAndPass(t *testing.T) {
	for _, tmpl := range Templates() {
		t.Run(tmpl.Name, func(t *testing.T) {
			t.Parallel()
			src, err := TemplateSource(tmpl.Name, DefaultScript)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			outcome := runner.Run(context.Background(), runner.Config{
				Engine: engine.Config{ScriptPath: DefaultScript, Source: src, Env: shortRun, Seed: 1},
				Quiet:  true, Stdout: &stdout, Stderr: &stderr,
			})
			if code := outcome.ExitCode(); code != exitcode.OK || outcome.Summary == nil {
				t.Fatalf("exit %d (%s)\n%s\n%s", code, outcome.Verdict, stdout.String(), stderr.String())
			}
			s := outcome.Summary
			if len(s.Thresholds) == 0 {
				t.Errorf("no threshold judged:\n%s", stdout.String())
			}
			for _, th := range s.Thresholds {
				if !th.Passed || th.Skipped || th.Note != "" {
					t.Errorf("threshold %s %s: passed %v, skipped %v, %q (value %g)", th.Metric, th.Threshold, th.Passed, th.Skipped, th.Note, th.Value)
				}
			}
			if s.Serving.OK == 0 || s.Serving.Failed != 0 || len(s.ScriptErrors) != 0 {
				t.Errorf("serving %d ok, %d failed; script errors %v", s.Serving.OK, s.Serving.Failed, s.ScriptErrors)
			}
			for _, c := range s.Checks {
				if c.Fails != 0 {
					t.Errorf("check %q failed %d times", c.Name, c.Fails)
				}
			}
		})
	}
}

// A FILE ending in .ts gets the same template, which must be TypeScript
// too: llmrun compiles a .ts script as TypeScript.
func TestTemplatesCompileAsTypeScript(t *testing.T) {
	for _, name := range TemplateNames() {
		src, err := TemplateSource(name, "script.ts")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Compile("script.ts", src); err != nil {
			t.Errorf("%s as TypeScript: %v", name, err)
		}
	}
}

// The templates are the five of issue 30, each with a summary for
// "llmrun new --list" taken from its first line, and comments that tell
// how to run it, point it at a server and give it a key. Its options are
// annotated with their type, so that an editor (and tsc, in
// modules/typings' TestScriptsTypeCheck) checks them as they are edited.
func TestTemplatesSayWhatTheyAreAndHowToRunThem(t *testing.T) {
	const optionsAnnotated = "/** @type {import('llmrun').Options} */\nexport const options = {"
	if got, want := strings.Join(TemplateNames(), ","), "chat,code,mixed,rag,sweep"; got != want {
		t.Errorf("templates %s, want %s", got, want)
	}
	for _, tmpl := range Templates() {
		src, err := TemplateSource(tmpl.Name, DefaultScript)
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(src), "\n"); tmpl.Summary == "" || first != "// "+tmpl.Name+": "+tmpl.Summary {
			t.Errorf("%s: first line %q, want // %s: SUMMARY", tmpl.Name, first, tmpl.Name)
		}
		for _, want := range []string{"//   llmrun run script.js\n", "--base-url http://HOST:PORT", "OPENAI_API_KEY", "__ENV.DURATION", "thresholds", optionsAnnotated} {
			if want == "__ENV.DURATION" && tmpl.Name == "sweep" {
				want = "__ENV.STEP"
			}
			if !strings.Contains(string(src), want) {
				t.Errorf("%s does not say %q", tmpl.Name, want)
			}
		}
		if n := strings.Count(string(src), "\n"); n > 80 {
			t.Errorf("%s has %d lines: a template is read whole, keep it to 80", tmpl.Name, n)
		}
	}
}

func TestTemplateSourceNamesTheFileToRun(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"bench.js", "//   llmrun run bench.js\n"},
		{"load/chat.ts", "//   llmrun run load/chat.ts\n"},
		{"my test.js", "//   llmrun run 'my test.js'\n"},
		{"it's.js", `//   llmrun run 'it'\''s.js'` + "\n"},
		{"-x.js", "//   llmrun run ./-x.js\n"}, // not a flag
		{"-my test.js", "//   llmrun run './-my test.js'\n"},
	} {
		src, err := TemplateSource(DefaultTemplate, tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), tc.want) || strings.Contains(string(src), "llmrun run script.js") {
			t.Errorf("written as %s, the template does not say %q:\n%s", tc.file, tc.want, src)
		}
	}
}

func TestUnknownTemplateNamesTheNearestAndTheList(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"chta", `no template "chta" (did you mean "chat"?); the templates are chat, code, mixed, rag, sweep`},
		{"swep", `no template "swep" (did you mean "sweep"?)`},
		{"warp-drive", `no template "warp-drive"; the templates are chat, code, mixed, rag, sweep`},
		{"../scripts", `no template "../scripts"; the templates are`},
	} {
		_, err := TemplateSource(tc.name, DefaultScript)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("template %q: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestWriteFileKeepsAnExistingFileUnlessTold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.js")
	if err := WriteFile(path, []byte("first"), false); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, []byte("second"), false)
	if !errors.Is(err, fs.ErrExist) || err.Error() != path+" already exists" {
		t.Errorf("writing over it: %v, want %q that is fs.ErrExist", err, path+" already exists")
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("after a refused write the file holds %q", b)
	}
	if err := WriteFile(path, []byte("2nd"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "2nd" {
		t.Errorf("after an overwrite the file holds %q, want all of the new content and none of the old", b)
	}
}

// A file named in a directory that is not there yet is written, the
// directories made ("llmrun new tests/chat.js" in a new project); a
// directory that cannot be made is an error naming the file.
func TestWriteFileMakesItsDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tests", "load", "chat.js")
	if err := WriteFile(path, []byte("chat"), false); err != nil {
		t.Fatalf("writing into a missing directory: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "chat" {
		t.Errorf("%s holds %q (%v), want %q", path, b, err, "chat")
	}
	dir := filepath.Dir(path)
	for _, overwrite := range []bool{false, true} {
		err := WriteFile(dir, nil, overwrite)
		if want := dir + " is a directory: name a file in it, such as " + filepath.Join(dir, "script.js"); err == nil || err.Error() != want || errors.Is(err, fs.ErrExist) {
			t.Errorf("writing over a directory (overwrite %v): %v, want %q, not fs.ErrExist (which asks for --force)", overwrite, err, want)
		}
	}
	blocked := filepath.Join(path, "x.js") // below a file, not a directory
	if err := WriteFile(blocked, nil, false); err == nil || !strings.Contains(err.Error(), blocked) {
		t.Errorf("writing below a file: %v, want an error naming %s", err, blocked)
	}
}
