package checks_test

import (
	"strings"
	"testing"
)

// TestCheckHostileValues passes checks and tags whose keys or values run
// script code that fails: a tag value becomes a description, a checks
// object whose names cannot be read is a TypeError naming the fault, never
// a Go value's dump.
func TestCheckHostileValues(t *testing.T) {
	v := newVU(t)
	v.Run(`llmrun.check(1, { a: true }, { lib: Object.create(null) })`)
	if st := v.Series("checks")["check:a,lib:[object without toString],scenario:test"]; st == nil || st.Count != 1 {
		t.Errorf("checks series = %v, want one tagged lib:[object without toString]", v.Series("checks"))
	}
	for src, want := range map[string]string{
		`llmrun.check(1, new Proxy({}, { ownKeys() { throw new Error('keys') } }))`:                  "TypeError: check(value, checks): reading the names of the checks: Error: keys",
		`llmrun.check(1, { get a() { throw Object.create(null) } })`:                                 `TypeError: check(value, checks): reading the check "a": [an object]`,
		`llmrun.check(1, { a: true }, new Proxy({}, { ownKeys() { throw new Error('tag keys') } }))`: "TypeError: reading the tags: Error: tag keys",
	} {
		_, err := v.Runtime().RunString(src)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", src, err, want)
		}
	}
}
