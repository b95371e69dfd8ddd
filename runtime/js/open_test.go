package js

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/filetest"
	"github.com/llmrun/llmrun/modules/modulestest"
	"github.com/llmrun/llmrun/modules/scriptpath"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	filetest.Write(t, dir, map[string]string{
		"data/prompts.txt": "hello\nworld\n",
		"lib/local.txt":    "beside the lib",
		"lib/lib.js":       "export const local = open('local.txt');\n",
	})
	abs := filepath.Join(dir, "data", "prompts.txt")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, src string
		want      string
		wantErr   string
	}{
		{"relative text", "const t = open('data/prompts.txt');\nexport default () => t;", "hello\nworld\n", ""},
		{"binary", "const b = open('./data/prompts.txt', 'b');\nexport default () => b instanceof ArrayBuffer && b.byteLength;", "12", ""},
		{"absolute", "const t = open(" + jsString(abs) + ");\nexport default () => t.length;", "12", ""},
		{"relative to the calling file", "import { local } from './lib/lib.js';\nexport default () => local;", "beside the lib", ""},
		{"missing file", "open('data/missing.txt');", "",
			`Error: open("data/missing.txt") in ` + filepath.Join(dir, "script.js") + ": no such file: looked for " + filepath.Join(dir, "data", "missing.txt") +
				" (relative to the script's directory) and data/missing.txt (relative to the working directory, " + wd + ")"},
		{"unknown mode", "open('data/prompts.txt', 'x');", "", `Error: open("data/prompts.txt"): unknown mode "x"; use 'b' to read bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := filepath.Join(dir, "script.js")
			s := mustCompile(t, script, tt.src)
			var read []string
			paths := scriptpath.New(scriptpath.Config{Script: script, FileRead: func(path string) { read = append(read, path) }})
			inst, err := s.Instantiate(InstanceConfig{VU: modulestest.NewVU(t), Paths: paths})
			if tt.wantErr != "" {
				var se *ScriptError
				if !errors.As(err, &se) || se.Message != tt.wantErr || se.Line != 1 {
					t.Fatalf("error = %v, want a ScriptError at line 1: %s", err, tt.wantErr)
				}
				if read != nil {
					t.Errorf("FileRead told %q of an open() that failed", read)
				}
				return
			}
			if len(read) != 1 || !strings.HasPrefix(read[0], dir) {
				t.Errorf("FileRead told %q, want the one file read, by its path", read)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := mustCall(t, inst, "default").String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpenOutsideInit(t *testing.T) {
	vu := modulestest.NewVU(t)
	inst := mustInstantiate(t, mustCompile(t, "script.js", "export default () => open('script.js');"), InstanceConfig{VU: vu})
	vu.LeaveInit()
	fn, _, _ := inst.Function("default")
	if _, err := fn(undefined); err == nil || !strings.Contains(err.Error(), "only be opened in the init context") {
		t.Errorf("error = %v, want one about the init context", err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
