package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/scripts"
)

// template is the named template as llmrun new writes it to file.
func template(t *testing.T, name, file string) string {
	t.Helper()
	src, err := scripts.TemplateSource(name, file)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// "llmrun new" alone writes script.js, the chat template, in the working
// directory, and says how to run it; a second time it keeps the file.
func TestNewWritesTheChatTemplateToScriptJS(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := command(t, "new")
	if code != exitcode.OK || stdout != "wrote script.js (the chat template)\nrun it: llmrun run script.js\nfor your editor: llmrun types .\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got := readFile(t, filepath.Join(dir, "script.js")); got != template(t, "chat", "script.js") {
		t.Errorf("script.js is not the chat template:\n%s", got)
	}
	code, _, stderr = command(t, "new")
	if code != exitcode.Usage || !strings.Contains(stderr, "llmrun new: script.js already exists; --force replaces it\n") {
		t.Errorf("a second llmrun new: exit %d, stderr %q; want exit 2 saying the file exists", code, stderr)
	}
}

func TestNewWritesTheTemplateAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ args []string }{
		{[]string{"--template", "rag"}},
		{[]string{"-t", "sweep"}},
		{[]string{"--template=mixed"}},
		{[]string{"-t", "code"}},
	} {
		name := tc.args[len(tc.args)-1]
		name = name[strings.LastIndex(name, "=")+1:]
		for _, file := range []string{name + ".js", name + ".ts"} {
			path := filepath.Join(dir, file)
			code, stdout, stderr := command(t, "new", append(tc.args, path)...)
			if code != exitcode.OK || !strings.Contains(stdout, "run it: llmrun run "+path+"\n") || !strings.Contains(stdout, "for your editor: llmrun types "+dir+"\n") {
				t.Errorf("%v %s: exit %d, stdout %q, stderr %q", tc.args, file, code, stdout, stderr)
				continue
			}
			if got := readFile(t, path); got != template(t, name, path) {
				t.Errorf("%s is not the %s template:\n%s", file, name, got)
			}
		}
	}
}

// An existing file is kept, untouched, unless --force, which replaces it.
func TestNewKeepsAnExistingFileUnlessForced(t *testing.T) {
	t.Parallel()
	path := writeScript(t, "mine.js", "// my own work\n")
	code, stdout, stderr := command(t, "new", "-t", "rag", path)
	if code != exitcode.Usage || stdout != "" || !strings.Contains(stderr, path+" already exists; --force replaces it") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and a message naming the file and --force", code, stdout, stderr)
	}
	if got := readFile(t, path); got != "// my own work\n" {
		t.Errorf("the refused llmrun new changed the file: %q", got)
	}
	if code, _, stderr := command(t, "new", "-t", "rag", "--force", path); code != exitcode.OK {
		t.Fatalf("--force: exit %d, stderr %q", code, stderr)
	}
	if got := readFile(t, path); got != template(t, "rag", path) {
		t.Errorf("after --force the file is not the rag template:\n%s", got)
	}
}

// - prints the template and writes nothing.
func TestNewPrintsToStdout(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := command(t, "new", "--template", "mixed", "-")
	if code != exitcode.OK || stdout != template(t, "mixed", "script.js") || stderr != "" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("llmrun new - wrote %v", entries)
	}
}

func TestNewListsTheTemplates(t *testing.T) {
	t.Parallel()
	code, stdout, _ := command(t, "new", "--list")
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != exitcode.OK || len(lines) != len(scripts.Templates()) {
		t.Fatalf("exit %d, --list:\n%s", code, stdout)
	}
	for i, tmpl := range scripts.Templates() {
		if want := "  " + tmpl.Name; !strings.HasPrefix(lines[i], want) || !strings.Contains(lines[i], tmpl.Summary) {
			t.Errorf("line %d %q, want the %s template and its summary", i, lines[i], tmpl.Name)
		}
	}
	if !strings.Contains(stdout, "  chat    chat traffic") || !strings.HasSuffix(lines[0], " (the default)") {
		t.Errorf("--list does not show chat as the default:\n%s", stdout)
	}
	if _, help, _ := command(t, "new", "--help"); !strings.Contains(help, stdout) {
		t.Errorf("--help does not list the templates as --list does:\n%s", help)
	}
}

func TestNewRefusesBadCommandLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-t", "chta", filepath.Join(dir, "a.js")}, `llmrun new: --template: no template "chta" (did you mean "chat"?); the templates are chat, code, mixed, rag, sweep`},
		{[]string{"-t", "warp", "-"}, `no template "warp"; the templates are chat, code, mixed, rag, sweep`},
		{[]string{"--templat", "rag"}, "llmrun new: unknown flag: --templat (did you mean --template?)"},
		{[]string{filepath.Join(dir, "a.js"), filepath.Join(dir, "b.js")}, `unexpected argument "` + filepath.Join(dir, "b.js") + `": one FILE at a time`},
	} {
		code, stdout, stderr := command(t, "new", tc.args...)
		if code != exitcode.Usage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused llmrun new wrote %v", entries)
	}
	blocker := filepath.Join(dir, "notes.txt")
	writeText(t, blocker, "")
	path := filepath.Join(blocker, "a.js")
	if code, _, stderr := command(t, "new", path); code != exitcode.Error || !strings.Contains(stderr, path) {
		t.Errorf("below a file: exit %d, stderr %q; want exit 1 naming the file", code, stderr)
	}
}

// A FILE in directories not made yet is written, the directories made.
func TestNewMakesTheFilesDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tests", "chat.js")
	if code, _, stderr := command(t, "new", path); code != exitcode.OK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if got := readFile(t, path); got != template(t, "chat", path) {
		t.Errorf("%s is not the chat template:\n%s", path, got)
	}
}

// What llmrun new writes runs as "llmrun new" says to run it, as
// TypeScript too.
func TestNewScriptRunsAsItSays(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "first test.ts")
	code, stdout, stderr := command(t, "new", "-t", "sweep", path)
	if code != exitcode.OK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if want := "run it: llmrun run '" + path + "'\n"; !strings.Contains(stdout, want) {
		t.Fatalf("stdout %q, want it to end %q", stdout, want)
	}
	code, stdout, stderr = command(t, "run", "-q", "--seed", "1", "-e", "LEVELS=1,2", "-e", "STEP=1s", path)
	if code != exitcode.OK || !strings.Contains(stdout, "within SLO ......... concurrency 2") {
		t.Errorf("llmrun run: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
