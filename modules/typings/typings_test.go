package typings_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/typings"
)

func TestWrite(t *testing.T) {
	declarations := typings.Declarations()
	for _, tc := range []struct {
		name    string
		before  map[string]string // files in the directory before Write
		force   bool
		actions []typings.Action // of llmrun.d.ts and jsconfig.json; nil: an error
		errWant string
		note    string
	}{
		{name: "new directory", actions: []typings.Action{typings.Wrote, typings.Wrote}},
		{name: "written before", before: map[string]string{"llmrun.d.ts": string(declarations), "jsconfig.json": string(configFile(t))},
			actions: []typings.Action{typings.Kept, typings.Kept}},
		{name: "older declarations", before: map[string]string{"llmrun.d.ts": "declare module 'llm' {}\n"},
			errWant: "llmrun.d.ts exists with other content: --force replaces it"},
		{name: "own jsconfig.json", before: map[string]string{"jsconfig.json": "{}\n"},
			errWant: "jsconfig.json exists with other content: --force replaces it, or keep yours and let it include llmrun.d.ts"},
		{name: "older declarations, forced", before: map[string]string{"llmrun.d.ts": "declare module 'llm' {}\n"}, force: true,
			actions: []typings.Action{typings.Replaced, typings.Wrote}},
		{name: "beside a tsconfig.json", before: map[string]string{"tsconfig.json": "{}\n"},
			actions: []typings.Action{typings.Wrote, typings.Wrote}, note: "tsconfig.json exists: editors read it instead of jsconfig.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "scripts")
			if len(tc.before) > 0 {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for name, content := range tc.before {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			written, note, err := typings.Write(dir, tc.force)
			if tc.actions == nil {
				if !errors.Is(err, typings.ErrDiffers) || !strings.Contains(err.Error(), tc.errWant) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("Write: %v, want an error naming %s: %q", err, dir, tc.errWant)
				}
				for name, content := range tc.before {
					if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != content {
						t.Errorf("%s changed though Write failed: %q", name, got)
					}
				}
				for _, f := range typings.Files() {
					if _, ok := tc.before[f.Name]; !ok {
						if _, err := os.Stat(filepath.Join(dir, f.Name)); err == nil {
							t.Errorf("%s was written though Write failed", f.Name)
						}
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(written) != len(tc.actions) {
				t.Fatalf("Write wrote %v, want %v", written, tc.actions)
			}
			for i, f := range typings.Files() {
				if want := (typings.Written{Path: filepath.Join(dir, f.Name), Action: tc.actions[i]}); written[i] != want {
					t.Errorf("written[%d] = %+v, want %+v", i, written[i], want)
				}
				if got, err := os.ReadFile(filepath.Join(dir, f.Name)); err != nil || !bytes.Equal(got, f.Data) {
					t.Errorf("%s after Write: %v, %d bytes, want the package's %d", f.Name, err, len(got), len(f.Data))
				}
			}
			if tc.note == "" && note != "" || !strings.Contains(note, tc.note) {
				t.Errorf("note %q, want %q", note, tc.note)
			}
		})
	}
}

// A directory that cannot be made is an error naming it.
func TestWriteUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := typings.Write(filepath.Join(file, "dir"), false); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("Write under a file: %v, want an error naming %s", err, file)
	}
}
