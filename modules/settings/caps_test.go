package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRefusesFilesThatNeverEnd(t *testing.T) {
	link := filepath.Join(t.TempDir(), "zero.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if _, err := Load(link); err == nil || !strings.Contains(err.Error(), link+" is a device, not a regular file") {
		t.Errorf("error = %v, want one saying the file is a device", err)
	}
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(`{"a": "`+strings.Repeat("x", MaxFileSize)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), big+" is larger than 16 MiB") {
		t.Errorf("error = %v, want one naming the cap", err)
	}
}
