package js

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/filetest"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/modulestest"
)

func TestRuntimeErrorPositions(t *testing.T) {
	dir := t.TempDir()
	filetest.Write(t, dir, map[string]string{
		"lib.ts": "// helpers\nexport function check(n: number): void {\n  if (n > 1) {\n    throw new RangeError(`too big: ${n}`);\n  }\n}\n",
	})
	tests := []struct {
		name, filename, src string
		fn                  string // "" for an error in the init code
		at                  string // file:line:column
		message, sourceLine string
		stack               string // a frame the stack must hold
	}{
		{
			name:     "JavaScript",
			filename: "script.js",
			src: `export const options = {};

function helper() {
  return 1;
}

export function chat() {
  throw new Error('x');
}
`,
			fn: "chat", at: "script.js:8:9",
			message: "Error: x", sourceLine: "  throw new Error('x');", stack: "at chat (script.js:8:9)",
		},
		{
			name:     "TypeScript",
			filename: "script.ts",
			src: `interface Options {
  vus: number;
}
type Fn = () => void;
export const options: Options = { vus: 1 };
export function chat(): void {
  throw new Error('x');
}
`,
			fn: "chat", at: "script.ts:7:9",
			message: "Error: x", sourceLine: "  throw new Error('x');", stack: "at chat (script.ts:7:9)",
		},
		{
			name:     "imports at the top",
			filename: "script.js",
			src: `import fake from 'fake';
import { client } from 'fake';
import * as ns from 'fake';

export default function () {
  const r = client('a');
  return r.missing.field;
}
`,
			fn: "default", at: "script.js:7:20",
			message: "TypeError: Cannot read property 'field' of undefined", sourceLine: "  return r.missing.field;",
			stack: "at script_default (script.js:7:20)",
		},
		{
			name:     "in an imported file",
			filename: filepath.Join(dir, "script.js"),
			src:      "import { check } from './lib.ts';\n\nexport default function () {\n  check(2);\n}\n",
			fn:       "default", at: filepath.Join(dir, "lib.ts") + ":4:11",
			message: "RangeError: too big: 2", sourceLine: "    throw new RangeError(`too big: ${n}`);",
			stack: "at script_default (" + filepath.Join(dir, "script.js") + ":4:3)",
		},
		{
			name:     "in the init code",
			filename: "script.js",
			src:      "import fake from 'fake';\nconst x = fake.nothing();\n",
			at:       "script.js:2:16",
			message:  "TypeError: Object has no member 'nothing'", sourceLine: "const x = fake.nothing();",
		},
		{
			name:     "thrown by a Go function",
			filename: "script.js",
			src:      "export default function () {\n  open('x.txt');\n}\n",
			fn:       "default", at: "script.js:2:3",
			message:    `Error: open("x.txt"): files can only be opened in the init context, at the top of the script`,
			sourceLine: "  open('x.txt');",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.filename, tt.src)
			vu := modulestest.NewVU(t)
			inst, err := s.Instantiate(InstanceConfig{VU: vu, Modules: registry(t, map[string]modules.Module{"fake": &fakeModule{}})})
			if tt.fn != "" {
				if err != nil {
					t.Fatal(err)
				}
				vu.LeaveInit()
				fn, ok, lookupErr := inst.Function(tt.fn)
				if !ok || lookupErr != nil {
					t.Fatalf("no function %q: %v", tt.fn, lookupErr)
				}
				_, err = fn(undefined)
			}
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("error = %v (%T), want a *ScriptError", err, err)
			}
			if at := fmt.Sprintf("%s:%d:%d", se.File, se.Line, se.Column); at != tt.at || se.Message != tt.message || se.SourceLine != tt.sourceLine {
				t.Errorf("got %s %q %q\nwant %s %q %q", at, se.Message, se.SourceLine, tt.at, tt.message, tt.sourceLine)
			}
			if !strings.Contains(se.Stack, tt.stack) {
				t.Errorf("stack %q does not hold %q", se.Stack, tt.stack)
			}
		})
	}
}

func TestScriptErrorString(t *testing.T) {
	tests := []struct {
		name string
		err  ScriptError
		want string
	}{
		{
			name: "everything",
			err: ScriptError{File: "a.js", Line: 12, Column: 4, Message: "Error: x", SourceLine: "\tif (x) {",
				Stack: "at f (a.js:12:4)\nat a.js:20:1"},
			want: "a.js:12:4: Error: x\n 12 | \tif (x) {\n    | \t  ^\n\tat f (a.js:12:4)\n\tat a.js:20:1",
		},
		{
			name: "no position",
			err:  ScriptError{File: "a.js", Message: "plain reason"},
			want: "a.js: plain reason",
		},
		{
			name: "long line",
			err:  ScriptError{File: "a.js", Line: 1, Column: 201, Message: "Error: x", SourceLine: strings.Repeat("a", 200) + "X" + strings.Repeat("b", 200)},
			want: "a.js:1:201: Error: x\n 1 | ..." + strings.Repeat("a", 60) + "X" + strings.Repeat("b", 59) + "...\n   | " + strings.Repeat(" ", 63) + "^",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestStacks(t *testing.T) {
	frames := parseStack("Error: two\nlines\n\tat f (lib/a b.js:3:5(12))\n\tat native\n\tat g (native)\n\tat a.js:9:1(4)\n")
	want := []frame{{function: "f", file: "lib/a b.js", line: 3, column: 5}, {file: "a.js", line: 9, column: 1}}
	if len(frames) != len(want) || frames[0] != want[0] || frames[1] != want[1] {
		t.Errorf("parseStack = %+v, want %+v", frames, want)
	}

	many := make([]frame, maxFrames+3)
	for i := range many {
		many[i] = frame{file: "a.js", line: i + 1, column: 1}
	}
	lines := strings.Split(renderStack(many, strings.ToUpper), "\n")
	if len(lines) != maxFrames+1 || lines[0] != "at A.JS:1:1" || lines[maxFrames] != "... 3 more frames" {
		t.Errorf("renderStack kept %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
