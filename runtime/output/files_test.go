package output_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/output"
)

// write writes s, or fails after half of it when fail is set.
func write(s string, fail bool) func(io.Writer) error {
	return func(w io.Writer) error {
		if fail {
			io.WriteString(w, s[:len(s)/2])
			return errors.New("the encoder failed")
		}
		_, err := io.WriteString(w, s)
		return err
	}
}

// A failed write leaves no file where there was none and the old one as it
// was; a good one replaces the file, through a link, whole.
func TestWriteFileWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	fresh, old, link := filepath.Join(dir, "new.json"), filepath.Join(dir, "old.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(old, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(old, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, old, link} {
		if err := output.WriteFile(path, write("new content", true)); err == nil || !strings.Contains(err.Error(), "the encoder failed") {
			t.Errorf("%s: error %v", path, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files after failed writes: %v, want old.json and link.json", entries)
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Errorf("old.json after failed writes: %q", b)
	}
	if err := output.WriteFile(link, write("new content", false)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "new content" {
		t.Errorf("old.json written through its link: %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if err := output.WriteFile("/dev/null", write("x", false)); err != nil {
		t.Errorf("/dev/null: %v", err)
	}
}

// CheckPath refuses a directory, a missing or unwritable directory, and
// accepts a new file in a writable one or a device, leaving nothing.
func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		dir:                                "it is a directory",
		filepath.Join(dir, "no", "x.json"): "directory " + filepath.Join(dir, "no") + " does not exist",
		"/proc/x.json":                     "directory /proc is not writable",
		filepath.Join(dir, "x.json"):       "",
		"/dev/null":                        "",
		"/dev/full":                        "it is a device other than /dev/null or a terminal",
		"/dev/zero":                        "it is a device other than /dev/null or a terminal",
	} {
		if _, err := os.Stat(path); strings.HasPrefix(path, "/dev/") && err != nil {
			continue
		}
		err := output.CheckPath(path)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
	// A records file is written while the run goes: its failure is seen
	// at its first write, so any device that opens will do.
	for _, device := range []string{"/dev/null", "/dev/full"} {
		if _, err := os.Stat(device); err != nil {
			continue
		}
		if err := output.CheckStreamPath(device); err != nil {
			t.Errorf("CheckStreamPath(%s): %v", device, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("CheckPath left %v", entries)
	}
}

// Two names of one file are found: the same path written differently, a
// link to the file, a file in a linked directory.
func TestSamePaths(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sub, filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	a := output.FileFlag{Flag: "--out jsonl", Path: filepath.Join(sub, "r.out")}
	for _, other := range []string{sub + "/../sub/r.out", filepath.Join(dir, "alias", "r.out")} {
		b := output.FileFlag{Flag: "--summary-export", Path: other}
		err := output.SamePaths([]output.FileFlag{a, b})
		if err == nil || err.Error() != "--out jsonl="+a.Path+" and --summary-export "+other+" are the same file, "+a.Path+": each output needs a file of its own" {
			t.Errorf("%s: %v", other, err)
		}
	}
	if err := output.SamePaths([]output.FileFlag{a, {Flag: "--out csv", Path: filepath.Join(sub, "r.csv")}}); err != nil {
		t.Errorf("two files: %v", err)
	}
}

// A link that does not resolve yet still names the file it will write:
// a dangling link, a chain of relative links, a link in a linked
// directory; a hard link is the same file once it exists. A loop of
// links is no file at all, and two other names are two files.
func TestSamePathsFollowsLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "a.jsonl")
	link := func(target, name string) string {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, name)
	}
	dangling := link("a.jsonl", "b.json")
	chain := link("c1", "c0")
	link("sub/../c2", "c1")
	link(a, "c2")
	linkedDir := link(".", "here")
	loop := link("loop2", "loop1")
	link("loop1", "loop2")
	existing := filepath.Join(dir, "x.json")
	if err := os.WriteFile(existing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.json")
	if err := os.Link(existing, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		first, second, shared string
	}{
		{a, dangling, a},
		{dangling, a, a},
		{chain, a, a},
		{filepath.Join(linkedDir, "b.json"), a, a},
		{existing, hard, existing},
		{loop, filepath.Join(dir, "loop2"), ""},
		{a, existing, ""},
	} {
		first := output.FileFlag{Flag: "--out jsonl", Path: tc.first}
		second := output.FileFlag{Flag: "--summary-export", Path: tc.second}
		err := output.SamePaths([]output.FileFlag{first, second})
		want := ""
		if tc.shared != "" {
			want = first.String() + " and " + second.String() + " are the same file, " + tc.shared + ": each output needs a file of its own"
		}
		if got := fmt.Sprint(err); want == "" && err != nil || want != "" && got != want {
			t.Errorf("%s, %s: got %v, want %q", tc.first, tc.second, err, want)
		}
	}
}
