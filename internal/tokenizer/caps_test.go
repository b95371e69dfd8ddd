package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenizerFileThatNeverEnds loads a tokenizer.json that is a device:
// refused before it is read.
func TestTokenizerFileThatNeverEnds(t *testing.T) {
	link := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	_, err := loadHF(link)
	if err == nil || !strings.Contains(err.Error(), link+" is a device, not a regular file") {
		t.Errorf("error = %v, want one saying the file is a device", err)
	}
}
