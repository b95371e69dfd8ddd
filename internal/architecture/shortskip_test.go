package architecture

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	testFunc  = regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	shortSkip = regexp.MustCompile(`testing\.Short\(\)[^\n]*\{\n\s*t\.Skip\("((?:[^"\\]|\\.)*)"\)`)
	testName  = regexp.MustCompile(`\bTest[A-Z]\w*`)
)

// TestShortSkipsNameTheirCover: every test that -short leaves out says
// which test covers the same code when short, a test that exists, or
// that no short test does and why.
func TestShortSkipsNameTheirCover(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]bool{}
	type skip struct{ file, reason string }
	var skips []skip
	err = walkTestFiles(root, func(rel string, b []byte) error {
		if filepath.Base(rel) == "shortskip_test.go" {
			return nil
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
			tests[m[1]] = true
		}
		found := shortSkip.FindAllStringSubmatch(string(b), -1)
		if uses := strings.Count(string(b), "testing.Short()"); uses != len(found) {
			t.Errorf("%s: %d uses of testing.Short(), %d read as `if testing.Short() { t.Skip(\"…\") }`", rel, uses, len(found))
		}
		for _, m := range found {
			skips = append(skips, skip{rel, m[1]})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) == 0 {
		t.Fatal("no -short skip found: the pattern reads none")
	}
	for _, s := range skips {
		names := testName.FindAllString(s.reason, -1)
		if len(names) == 0 && !strings.Contains(s.reason, "no short test") {
			t.Errorf("%s: -short skip %q names no test that covers the same code when short (nor says \"no short test\" and why)", s.file, s.reason)
		}
		for _, n := range names {
			if !tests[n] {
				t.Errorf("%s: -short skip %q names %s, which is no test", s.file, s.reason, n)
			}
		}
	}
}
