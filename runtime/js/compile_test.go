package js

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/llmrun/llmrun/internal/filetest"
)

func TestCompileExports(t *testing.T) {
	tests := []struct {
		name, filename, src string
		// calls maps an exported function to the result it must return.
		calls map[string]any
	}{
		{
			name:     "ESM default and named exports",
			filename: "script.js",
			src: `export const options = { vus: 1 };
export default function () { return 'default'; }
export function chat() { return 'chat'; }
export function setup() { return { token: 't' }; }
export function teardown(data) { return data; }
export function handleSummary(data) { return { stdout: 'summary' }; }
`,
			calls: map[string]any{"default": "default", "chat": "chat"},
		},
		{
			name:     "TypeScript with types",
			filename: "script.ts",
			src: `interface Turn { role: 'user' | 'assistant'; content: string }
type Reply = { text: string };
enum Kind { Chat = 'chat' }
function reply(turns: Turn[]): Reply {
  return { text: turns.map((t: Turn): string => t.content).join(' ') };
}
export default function (): string {
  return reply([{ role: 'user', content: 'hello' }, { role: 'user', content: Kind.Chat }]).text;
}
`,
			calls: map[string]any{"default": "hello chat"},
		},
		{
			name:     "CommonJS",
			filename: "script.cjs",
			src: `module.exports.chat = function () { return 'cjs'; };
exports.other = () => 1;
`,
			calls: map[string]any{"chat": "cjs", "other": int64(1)},
		},
		{
			name:     "modern syntax goja parses",
			filename: "script.mjs",
			src: `class Box { #v; static count = 0; constructor(v) { this.#v = v; Box.count++; } get v() { return this.#v; } }
export default function () {
  const o = { a: { b: null } };
  let n = o.a?.b ?? 2;
  n ||= 3;
  const { a, ...rest } = { a: 1, b: 2 };
  return [new Box(n).v, rest.b, 2 ** 3, 1_000, /(?<x>\d)/.exec('7').groups.x].join(',');
}
`,
			calls: map[string]any{"default": "2,2,8,1000,7"},
		},
		{
			name:     "async iteration lowered for goja",
			filename: "script.js",
			src: `async function* numbers() { yield 1; yield 2; }
export default async function () {
  let sum = 0;
  for await (const n of numbers()) sum += n;
  return sum;
}
`,
			calls: map[string]any{"default": int64(3)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := mustInstantiate(t, mustCompile(t, tt.filename, tt.src), InstanceConfig{})
			for name, want := range tt.calls {
				if got := mustCall(t, inst, name).Export(); got != want {
					t.Errorf("%s() = %#v, want %#v", name, got, want)
				}
			}
		})
	}
}

func TestFunctionLookup(t *testing.T) {
	inst := mustInstantiate(t, mustCompile(t, "script.js", `export const options = {};
export default function () {}
export function setup() {}
`), InstanceConfig{})
	for name, want := range map[string]bool{"default": true, "setup": true, "teardown": false, "options": false} {
		if _, ok, err := inst.Function(name); ok != want || err != nil {
			t.Errorf("Function(%q) found = %v, %v; want %v", name, ok, err, want)
		}
	}
}

func TestRelativeImports(t *testing.T) {
	dir := t.TempDir()
	filetest.Write(t, dir, map[string]string{
		"lib/util.ts":   "export const greet = (name: string): string => `hello ${name}`;\n",
		"lib/data.json": `{"prompts": ["a", "b"]}`,
		"lib/cjs.js":    "module.exports = { twice: (x) => 2 * x };\n",
	})
	script := mustCompile(t, filepath.Join(dir, "script.js"), `import { greet } from './lib/util.ts';
import data from './lib/data.json';
import cjs from './lib/cjs.js';
export default function () { return [greet('you'), data.prompts.length, cjs.twice(2)].join(','); }
`)
	inst := mustInstantiate(t, script, InstanceConfig{})
	if got := mustCall(t, inst, "default").String(); got != "hello you,2,4" {
		t.Errorf("default() = %q", got)
	}
	// The files a copy of the script needs: the script and its imports.
	var want []string
	for _, name := range []string{"lib/cjs.js", "lib/data.json", "lib/util.ts", "script.js"} {
		want = append(want, filepath.Join(dir, name))
	}
	if got := script.Files(); !slices.Equal(got, want) {
		t.Errorf("Files() = %q, want %q", got, want)
	}
}

// TestFilesNamedWithURLCharacters: the source map names its files as URLs;
// Files names them as they are on disk (llmrun kube reads them).
func TestFilesNamedWithURLCharacters(t *testing.T) {
	for _, name := range []string{"a(b).js", "x%y.js", "c#d.js", "é.js", "with space.js"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			filetest.Write(t, dir, map[string]string{"lib (1)/util%20.js": "export const x = 1;\n"})
			script := mustCompile(t, filepath.Join(dir, name), "import { x } from './lib (1)/util%20.js';\nexport default function () { return x; }\n")
			want := []string{filepath.Join(dir, "lib (1)/util%20.js"), filepath.Join(dir, name)}
			slices.Sort(want)
			if got := script.Files(); !slices.Equal(got, want) {
				t.Errorf("Files() = %q, want %q", got, want)
			}
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	dir := t.TempDir()
	filetest.Write(t, dir, map[string]string{"lib.ts": "export const x: number = ;\n"})
	tests := []struct {
		name, filename, src string
		at                  string // file:line:column
		message, sourceLine string
	}{
		{
			name:       "JavaScript",
			filename:   "examples/script.js",
			src:        "export default function () {\n  let a = 1;\n  let b x;\n}\n",
			at:         "examples/script.js:3:9",
			message:    `SyntaxError: Expected ";" but found "x"`,
			sourceLine: "  let b x;",
		},
		{
			name:       "TypeScript",
			filename:   "script.ts",
			src:        "type T = { a: number };\nconst t: T = { a: 1 ;\n",
			at:         "script.ts:2:21",
			message:    `SyntaxError: Expected "}" but found ";"`,
			sourceLine: "const t: T = { a: 1 ;",
		},
		{
			name:       "in an imported file",
			filename:   filepath.Join(dir, "script.js"),
			src:        "import { x } from './lib.ts';\nexport default function () { return x; }\n",
			at:         filepath.Join(dir, "lib.ts") + ":1:26",
			message:    `SyntaxError: Unexpected ";"`,
			sourceLine: "export const x: number = ;",
		},
		{
			name:       "missing import",
			filename:   filepath.Join(dir, "script.js"),
			src:        "import { y } from './nope.js';\n",
			at:         filepath.Join(dir, "script.js") + ":1:19",
			message:    `SyntaxError: Could not resolve "./nope.js"`,
			sourceLine: "import { y } from './nope.js';",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.filename, []byte(tt.src))
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Compile error = %v (%T), want a *ScriptError", err, err)
			}
			if at := fmt.Sprintf("%s:%d:%d", se.File, se.Line, se.Column); at != tt.at || se.Message != tt.message || se.SourceLine != tt.sourceLine {
				t.Errorf("got %s %q %q\nwant %s %q %q", at, se.Message, se.SourceLine, tt.at, tt.message, tt.sourceLine)
			}
			excerpt := tt.sourceLine + "\n " + strings.Repeat(" ", len(strconv.Itoa(se.Line))) + " | " + strings.Repeat(" ", se.Column-1) + "^"
			if msg := err.Error(); !strings.HasSuffix(msg, excerpt) {
				t.Errorf("Error() does not end with the source line and a caret under column %d:\n%s", se.Column, msg)
			}
		})
	}
}

func TestSyntaxErrorMessage(t *testing.T) {
	_, err := Compile("script.js", []byte("let a = 1;\nlet b x\n"))
	want := `script.js:2:7: SyntaxError: Expected ";" but found "x"
 2 | let b x
   |       ^`
	if err == nil || err.Error() != want {
		t.Errorf("Error() =\n%v\nwant\n%s", err, want)
	}
}

// A script built into the binary imports its library from an fs.FS, not
// from the disk: relative to the importing file, TypeScript included; an
// import the FS lacks is an error naming it.
func TestCompileFSImports(t *testing.T) {
	fsys := fstest.MapFS{
		"lib/sweep.js": {Data: []byte("import { twice } from './math.ts';\nimport { name } from '../shared.js';\nexport const level = (n) => name + ':' + twice(n);\n")},
		"lib/math.ts":  {Data: []byte("export const twice = (x: number): number => 2 * x;\n")},
		"shared.js":    {Data: []byte("export const name = 'c';\n")},
	}
	s, err := CompileFS("stock:sweep.js", []byte("import { level } from './lib/sweep.js';\nexport default function () { return level(8); }\n"), fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustCall(t, mustInstantiate(t, s, InstanceConfig{}), "default").String(); got != "c:16" {
		t.Errorf("default() = %q", got)
	}
	if files := s.Files(); files != nil {
		t.Errorf("Files() = %q for a script built into llmrun, want none on disk", files)
	}
	_, err = CompileFS("stock:broken.js", []byte("import { x } from './lib/missing.js';\nexport default function () {}\n"), fsys)
	if err == nil || !strings.Contains(err.Error(), "./lib/missing.js is not among the scripts built into llmrun") {
		t.Errorf("a missing embedded import: %v", err)
	}
}
