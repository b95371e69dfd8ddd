package filetest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	Write(t, dir, map[string]string{"a.txt": "A", "lib/deep/b.js": "B"})
	for name, want := range map[string]string{"a.txt": "A", "lib/deep/b.js": "B"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}
