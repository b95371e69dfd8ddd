// Package spelling finds the name a user probably meant: the nearest of
// the known names by edit distance, for the "did you mean" of a message.
package spelling

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Nearest returns the known name closest to name by edit distance, when
// it is close enough to be a slip (at most max(2, len(name)/3) edits), or
// "" when none is. Among equally close names, the first known wins.
func Nearest(name string, known []string) string {
	if all := AllNearest(name, known); len(all) > 0 {
		return all[0]
	}
	return ""
}

// AllNearest returns every known name at the smallest edit distance from
// name, in the order known lists them, when that distance is a slip's (at
// most max(2, len(name)/3) edits): "llm_ttf" is as near to llm_ttft as to
// llm_ttfb, and a message should offer both.
func AllNearest(name string, known []string) []string {
	var best []string
	bestD := max(2, len(name)/3) + 1
	for _, k := range known {
		switch d := Distance(name, k); {
		case d < bestD:
			best, bestD = []string{k}, d
		case d == bestD && len(best) > 0 && !slices.Contains(best, k):
			best = append(best, k)
		}
	}
	return best
}

// Distance is the Levenshtein distance between two names, counted in
// bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// FlagHint is err, the error of fs's Parse, with the flag the user
// probably meant when err is pflag's "unknown flag: --NAME" and NAME is a
// slip of one of fs's flags: "unknown flag: --base-ur (did you mean
// --base-url?)". Any other error is returned as it is.
func FlagHint(err error, fs *pflag.FlagSet) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	name, _, _ = strings.Cut(name, "=")
	var known []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			known = append(known, f.Name)
		}
	})
	near := Nearest(name, known)
	if near == "" {
		near = onlyExtension(name, known)
	}
	if near != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, near)
	}
	return err
}

// onlyExtension returns the one known name that begins with name, a
// flag cut short (--api-key for --api-key-env), or "" when none or
// several do, or name is too short to say.
func onlyExtension(name string, known []string) string {
	if len(name) < 3 {
		return ""
	}
	found := ""
	for _, k := range known {
		if strings.HasPrefix(k, name) {
			if found != "" {
				return ""
			}
			found = k
		}
	}
	return found
}
