package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/typings"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// llmrun types prints the declarations; with a directory it writes them
// and the editor's configuration there, never over a file of other
// content unless told to.
func TestTypesCommand(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := command(t, "types")
	if code != exitcode.OK || stdout != string(typings.Declarations()) || stderr != "" {
		t.Fatalf("llmrun types: exit %d, stderr %q, stdout of %d bytes, want the %d of the declarations", code, stderr, len(stdout), len(typings.Declarations()))
	}

	dir := filepath.Join(t.TempDir(), "scripts")
	declarations := filepath.Join(dir, "llmrun.d.ts")
	jsconfig := filepath.Join(dir, "jsconfig.json")
	for _, step := range []struct {
		name   string
		before func()
		args   []string
		code   int
		stdout []string // lines, in order
		stderr string
	}{
		{name: "into a new directory", args: []string{dir}, stdout: []string{"wrote " + declarations, "wrote " + jsconfig}},
		{name: "again", args: []string{dir}, stdout: []string{"kept " + declarations, "kept " + jsconfig}},
		{name: "over older declarations", before: func() { writeText(t, declarations, "declare module 'llm' {}\n") },
			args: []string{dir}, code: exitcode.Usage, stderr: "llmrun types: " + declarations + " exists with other content: --force replaces it\n"},
		{name: "over older declarations, forced", args: []string{dir, "--force"}, stdout: []string{"replaced " + declarations, "kept " + jsconfig}},
		{name: "beside a tsconfig.json", before: func() { writeText(t, filepath.Join(dir, "tsconfig.json"), "{}\n") },
			args: []string{dir}, stdout: []string{"kept " + declarations, "kept " + jsconfig}, stderr: "tsconfig.json exists: editors read it instead of jsconfig.json"},
		{name: "two directories", args: []string{dir, dir}, code: exitcode.Usage, stderr: "llmrun types: one directory at most, got 2 arguments"},
		{name: "--force without a directory", args: []string{"--force"}, code: exitcode.Usage, stderr: "--force replaces files in DIR, and none is given"},
		{name: "mistyped flag", args: []string{"--forc", dir}, code: exitcode.Usage, stderr: "--force"},
	} {
		if step.before != nil {
			step.before()
		}
		wantStdout := ""
		for _, line := range step.stdout {
			wantStdout += line + "\n"
		}
		code, stdout, stderr := command(t, "types", step.args...)
		if code != step.code || stdout != wantStdout || !strings.Contains(stderr, step.stderr) {
			t.Errorf("%s: llmrun types %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
				step.name, strings.Join(step.args, " "), code, stdout, stderr, step.code, wantStdout, step.stderr)
		}
	}
	if got, err := os.ReadFile(declarations); err != nil || string(got) != string(typings.Declarations()) {
		t.Errorf("%s after --force: %v, %d bytes, want the declarations", declarations, err, len(got))
	}
}

func writeText(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// llmrun types - prints the declarations, as llmrun new - prints its
// template, and makes no directory named -.
func TestTypesDashPrints(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := command(t, "types", "-")
	if code != exitcode.OK || stdout != string(typings.Declarations()) || stderr != "" {
		t.Errorf("llmrun types -: exit %d, stderr %q, stdout %q, want the %d bytes of the declarations", code, stderr, stdout[:min(len(stdout), 200)], len(typings.Declarations()))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("llmrun types - wrote %v", entries)
	}
	if code, _, stderr := command(t, "types", "-", "--force"); code != exitcode.Usage || !strings.Contains(stderr, "--force replaces files in DIR") {
		t.Errorf("llmrun types - --force: exit %d, stderr %q, want a usage error", code, stderr)
	}
}
