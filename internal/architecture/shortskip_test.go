package architecture

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	testFunc  = regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	shortSkip = regexp.MustCompile(`testing\.Short\(\)[^\n]*\{\n\s*t\.Skip\("((?:[^"\\]|\\.)*)"\)`)
	raceSkip  = regexp.MustCompile(`race\.Enabled[^\n]*\{\n\s*t\.Skip\("((?:[^"\\]|\\.)*)"\)`)
	testName  = regexp.MustCompile(`\bTest[A-Z]\w*`)
)

// testFiles are the module's test files as ./... finds them, their text
// by path from the module's root, and the tests they declare.
func testFiles(t *testing.T) (files map[string]string, tests map[string]bool) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, tests = map[string]string{}, map[string]bool{}
	err = walkTestFiles(root, func(rel string, b []byte) error {
		if filepath.Base(rel) == "shortskip_test.go" {
			return nil
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
			tests[m[1]] = true
		}
		files[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, tests
}

// skip is a t.Skip of a test file, with its reason.
type skip struct{ file, reason string }

// skipsOf are the skips pattern finds in files, in the order of their
// paths.
func skipsOf(files map[string]string, pattern *regexp.Regexp) []skip {
	var out []skip
	for _, path := range slices.Sorted(maps.Keys(files)) {
		for _, m := range pattern.FindAllStringSubmatch(files[path], -1) {
			out = append(out, skip{path, m[1]})
		}
	}
	return out
}

// uncovered are the skips whose reason names no test, unless it says
// excuse (empty: no excuse is taken), or names one that is none.
func uncovered(skips []skip, tests map[string]bool, kind, excuse string) []string {
	var out []string
	for _, s := range skips {
		names := testName.FindAllString(s.reason, -1)
		if len(names) == 0 && (excuse == "" || !strings.Contains(s.reason, excuse)) {
			out = append(out, fmt.Sprintf("%s: %s skip %q names no test that covers the same code", s.file, kind, s.reason))
		}
		for _, n := range names {
			if !tests[n] {
				out = append(out, fmt.Sprintf("%s: %s skip %q names %s, which is no test", s.file, kind, s.reason, n))
			}
		}
	}
	return out
}

// TestShortSkipsNameTheirCover: every test that -short leaves out says
// which test covers the same code when short, a test that exists, or
// that no short test does and why.
func TestShortSkipsNameTheirCover(t *testing.T) {
	files, tests := testFiles(t)
	for path, text := range files {
		if uses, found := strings.Count(text, "testing.Short()"), len(shortSkip.FindAllStringIndex(text, -1)); uses != found {
			t.Errorf("%s: %d uses of testing.Short(), %d read as `if testing.Short() { t.Skip(\"…\") }`", path, uses, found)
		}
	}
	skips := skipsOf(files, shortSkip)
	if len(skips) == 0 {
		t.Fatal("no -short skip found: the pattern reads none")
	}
	for _, msg := range uncovered(skips, tests, "-short", "no short test") {
		t.Error(msg + ` (nor says "no short test" and why)`)
	}
}

// TestRaceSkipsNameTheirCover: every test that skips under the race
// detector (internal/race) names the test that covers the same code,
// under the race detector when one does, else itself, which go test runs
// without -race.
func TestRaceSkipsNameTheirCover(t *testing.T) {
	files, tests := testFiles(t)
	skips := skipsOf(files, raceSkip)
	if len(skips) == 0 {
		t.Fatal("no race skip found: the pattern reads none")
	}
	for _, msg := range uncovered(skips, tests, "race", "") {
		t.Error(msg)
	}
}

// The skips' check finds a skip that names no test, or one that is
// none, and takes "no short test" only where it is the excuse.
func TestSkipChecksCatchAViolation(t *testing.T) {
	tests := map[string]bool{"TestCover": true}
	for _, tc := range []struct {
		name, text, excuse string
		pattern            *regexp.Regexp
		want               string // in the one violation; "" for none
	}{
		{"a short skip with its cover", "if testing.Short() {\n\tt.Skip(\"slow: TestCover covers it\")\n}", "no short test", shortSkip, ""},
		{"a short skip with the excuse", "if testing.Short() {\n\tt.Skip(\"no short test: its point is its size\")\n}", "no short test", shortSkip, ""},
		{"a short skip naming nothing", "if testing.Short() {\n\tt.Skip(\"slow\")\n}", "no short test", shortSkip, "names no test"},
		{"a race skip with its cover", "if race.Enabled {\n\tt.Skip(\"allocations: TestCover counts them without -race\")\n}", "", raceSkip, ""},
		{"a race skip naming nothing", "if race.Enabled {\n\tt.Skip(\"allocation counts mean nothing under it\")\n}", "", raceSkip, "names no test"},
		{"a race skip taking the short excuse", "if race.Enabled {\n\tt.Skip(\"no short test\")\n}", "", raceSkip, "names no test"},
		{"a race skip naming a test that is none", "if race.Enabled && big {\n\tt.Skip(\"TestGone covers it\")\n}", "", raceSkip, "names TestGone, which is no test"},
	} {
		skips := skipsOf(map[string]string{"x_test.go": tc.text}, tc.pattern)
		if len(skips) != 1 {
			t.Fatalf("%s: %d skips read, want 1", tc.name, len(skips))
		}
		got := uncovered(skips, tests, "kind", tc.excuse)
		if tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
