package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDatasetThatNeverEnds loads a dataset from a device that never ends
// (through a link with a dataset's extension): a clear error, not a read
// until memory runs out.
func TestDatasetThatNeverEnds(t *testing.T) {
	link := filepath.Join(t.TempDir(), "zero.csv")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	_, err := LoadDataset(link, "")
	if err == nil || !strings.Contains(err.Error(), link+" is a device, not a regular file") {
		t.Errorf("error = %v, want one saying the file is a device", err)
	}
	if _, err := LoadDataset(t.TempDir(), FormatJSONL); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: error = %v", err)
	}
}
