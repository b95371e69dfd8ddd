package main

import (
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the commands' help")

const (
	cliReferencePath = "../../docs/cli.md"
	exitCodesSource  = "../../runtime/exitcode/exitcode.go"
	regenerate       = "go test ./cmd/llmrun -run TestCLIReference -update"
)

// docs/cli.md is generated from what the commands print for --help (their
// usage texts and pflag's list of their flags) and from the exit codes'
// doc comments: a flag added, renamed or given another default, or a
// usage text edited, without regenerating it fails here.
func TestCLIReference(t *testing.T) {
	want := cliReference(t)
	if *update {
		if err := os.WriteFile(cliReferencePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(cliReferencePath)
	if err != nil {
		t.Fatalf("%v: regenerate it with %s", err, regenerate)
	}
	if line, g, w := firstDifference(string(got), want); line > 0 {
		t.Errorf("docs/cli.md differs from the commands' help at line %d:\n  file:      %q\n  generated: %q\nregenerate it with %s", line, g, w, regenerate)
	}
}

// "llmrun help COMMAND" prints what "llmrun COMMAND --help" prints, and
// both are COMMAND's section of docs/cli.md, inside its code block.
func TestHelpIsTheCLIReferenceSection(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(cliReferencePath)
	if err != nil {
		t.Fatalf("%v: regenerate it with %s", err, regenerate)
	}
	sections := referenceSections(string(doc))
	if got := sections["llmrun"]; got != helpOf(t, "--help") {
		t.Errorf("docs/cli.md's section llmrun is not what llmrun --help prints:\n%s", got)
	}
	for _, name := range commands {
		help := helpOf(t, "help", name)
		if own := helpOf(t, name, "--help"); own != help {
			t.Errorf("llmrun help %s prints\n%s\nllmrun %s --help prints\n%s", name, help, name, own)
		}
		if got, ok := sections["llmrun "+name]; !ok || got != help {
			t.Errorf("docs/cli.md's section llmrun %s (found: %t) is not what llmrun help %s prints:\n%s", name, ok, name, got)
		}
	}
}

// cliReference is the text of docs/cli.md.
func cliReference(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n")
	b.WriteString("Each section is exactly what `llmrun help COMMAND` and `llmrun COMMAND --help`\n")
	b.WriteString("print: the command's usage, then every flag with its type, default and\n")
	b.WriteString("meaning. This file is generated from them: do not edit it, regenerate it\n")
	b.WriteString("with `" + regenerate + "`\n")
	b.WriteString("([contributing](contributing.md#the-command-line-reference)).\n\n")
	names := append([]string{"llmrun"}, prefixed("llmrun ", commands)...)
	for _, name := range append(names, "Exit codes") {
		fmt.Fprintf(&b, "- [%s](#%s)\n", name, strings.ToLower(strings.ReplaceAll(name, " ", "-")))
	}
	section(&b, "llmrun", helpOf(t, "--help"))
	for _, name := range commands {
		section(&b, "llmrun "+name, helpOf(t, "help", name))
	}
	precedence, codes := exitCodes(t)
	b.WriteString("\n## Exit codes\n\n")
	b.WriteString("Every command exits with one of these codes; the section of a command\n")
	b.WriteString("that uses only some of them says which.\n\n")
	b.WriteString("| code | meaning |\n|---|---|\n")
	for _, c := range codes {
		fmt.Fprintf(&b, "| %s | %s |\n", c.value, c.meaning)
	}
	b.WriteString("\n" + precedence)
	return b.String()
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = prefix + name
	}
	return out
}

// section writes a command's heading and its help in a code block.
func section(b *strings.Builder, heading, help string) {
	fmt.Fprintf(b, "\n## %s\n\n```text\n%s```\n", heading, help)
}

// referenceSections are docs/cli.md's code blocks by their section's
// heading.
func referenceSections(doc string) map[string]string {
	sections := map[string]string{}
	for _, part := range strings.Split(doc, "\n## ")[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		if _, block, ok := strings.Cut(body, "```text\n"); ok {
			sections[heading], _, _ = strings.Cut(block, "```\n")
		}
	}
	return sections
}

// helpOf is what llmrun prints for args, which must be a request for
// help: on stdout alone, with exit 0.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := cli(t, context.Background(), nil, args...)
	if code != exitcode.OK || stderr != "" || stdout == "" {
		t.Fatalf("llmrun %s: exit %d, stderr %q, stdout %q", strings.Join(args, " "), code, stderr, stdout)
	}
	return stdout
}

type exitCode struct{ value, meaning string }

// exitCodes are runtime/exitcode's constants, their meanings the doc
// comments ("Thresholds: a threshold failed.") without the name, and the
// package comment's last paragraph, which says which code wins.
func exitCodes(t *testing.T) (precedence string, codes []exitCode) {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), exitCodesSource, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	paragraphs := strings.Split(file.Doc.Text(), "\n\n")
	precedence = paragraphs[len(paragraphs)-1]
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			v := spec.(*ast.ValueSpec)
			name := v.Names[0].Name
			meaning, ok := strings.CutPrefix(strings.Join(strings.Fields(v.Doc.Text()), " "), name+": ")
			var lit *ast.BasicLit
			if len(v.Values) == 1 {
				lit, _ = v.Values[0].(*ast.BasicLit)
			}
			if !ok || lit == nil {
				t.Fatalf("%s: exit code %s is not a number with a doc comment %q", exitCodesSource, name, name+": what it means")
			}
			codes = append(codes, exitCode{lit.Value, meaning})
		}
	}
	return precedence, codes
}

// firstDifference is the first line (from 1) where got and want differ,
// and the two lines; 0 when they are equal.
func firstDifference(got, want string) (int, string, string) {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return i + 1, gl, wl
		}
	}
	return 0, "", ""
}

// "llmrun help" answers only the commands' names: with none, the usage;
// with its own, or --help, its own help; with another word, the
// unknown-command error and its hint, as "llmrun WORD" gets.
func TestHelpCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string // its start
		stderrHint string
	}{
		{[]string{"help"}, exitcode.OK, usage, ""},
		{[]string{"help", "help"}, exitcode.OK, helpUsage, ""},
		{[]string{"help", "--help"}, exitcode.OK, helpUsage, ""},
		{[]string{"--help", "-h"}, exitcode.OK, usage, ""},
		{[]string{"help", "version"}, exitcode.OK, versionUsage, ""},
		{[]string{"version", "-h"}, exitcode.OK, versionUsage, ""},
		{[]string{"help", "compare"}, exitcode.OK, compareUsage, ""},
		{[]string{"help", "rnu"}, exitcode.Usage, "", `llmrun: unknown command "rnu" (did you mean "run"?)`},
		{[]string{"help", "chat.js"}, exitcode.Usage, "", `llmrun: unknown command "chat.js"`},
		{[]string{"help", "--vus"}, exitcode.Usage, "", `llmrun: unknown command "--vus"`},
	} {
		code, stdout, stderr := cli(t, context.Background(), nil, tc.args...)
		if code != tc.code || !strings.HasPrefix(stdout, tc.stdout) || tc.stdout == "" && stdout != "" || !strings.Contains(stderr, tc.stderrHint) {
			t.Errorf("llmrun %s: exit %d, stdout %q, stderr %q; want exit %d, stdout beginning %q, stderr with %q",
				strings.Join(tc.args, " "), code, stdout, stderr, tc.code, tc.stdout, tc.stderrHint)
		}
	}
}
