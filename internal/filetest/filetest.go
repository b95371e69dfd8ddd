// Package filetest writes trees of files for tests: a script with the
// modules, datasets and settings it names, laid out as a user's project.
package filetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes each file of files (a slash-separated path relative to
// dir: its content) with the directories it is in, failing t on error.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
