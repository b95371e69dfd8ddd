package hfhubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RepoDir is the directory of the model repoID ("ORG/NAME") in the
// Hugging Face cache at cacheDir: models--ORG--NAME.
func RepoDir(cacheDir, repoID string) string {
	return filepath.Join(cacheDir, "models--"+strings.ReplaceAll(repoID, "/", "--"))
}

// SnapshotPath is where the cache at cacheDir keeps filename of repoID at
// commit.
func SnapshotPath(cacheDir, repoID, commit, filename string) string {
	return filepath.Join(RepoDir(cacheDir, repoID), "snapshots", commit, filepath.FromSlash(filename))
}

// Cache writes files (by name) of repoID at commit into the Hugging Face
// cache at cacheDir, laid out as huggingface_hub leaves a download: each
// file's bytes as blobs/SHA256, snapshots/COMMIT/NAME a relative link to
// its blob, and refs/REF holding commit for each of refs (branches or
// tags). It returns the snapshot's directory.
func Cache(t testing.TB, cacheDir, repoID, commit string, files map[string][]byte, refs ...string) string {
	t.Helper()
	dir := RepoDir(cacheDir, repoID)
	write := func(path string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		sum := sha256.Sum256(data)
		blob := filepath.Join(dir, "blobs", hex.EncodeToString(sum[:]))
		write(blob, data)
		link := SnapshotPath(cacheDir, repoID, commit, name)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		target, err := filepath.Rel(filepath.Dir(link), blob)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, ref := range refs {
		write(filepath.Join(dir, "refs", filepath.FromSlash(ref)), []byte(commit))
	}
	return filepath.Join(dir, "snapshots", commit)
}
