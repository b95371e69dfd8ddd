package tokenizer

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestCountWindowsMatchesWhole counts texts of every kind (code, numbers,
// punctuation runs, contractions, non-Latin scripts, white space runs,
// random characters) a window at a time: where a letter and a space meet
// is a boundary of both encodings' pre-tokens, so the windows add up to
// the count of the whole text.
func TestCountWindowsMatchesWhole(t *testing.T) {
	pieces := append(slices.Clone(hfCorpus), randomHFStrings(2000)...)
	longest := 0
	for _, p := range pieces {
		longest = max(longest, len(p))
	}
	// "z " after each piece: a place to cut at least every longest+2
	// bytes, wherever the pieces themselves have none.
	text := strings.Join(pieces, "z ")
	for _, name := range Encodings {
		tok, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		tk := tok.(*tiktoken)
		want, err := tk.codec.Count(text)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			checkWindows(t, text, []int{longest + 2, longest + 50, 3 * longest, 4096}, want, tk.countWindows)
		})
	}
}

// checkWindows checks that countWindows counts text, a window of each
// size in windows at a time, to want, the count of the whole text; every
// window must be cut where a letter meets a space.
func checkWindows(t *testing.T, text string, windows []int, want int, countWindows func(text string, window int) (int, error)) {
	t.Helper()
	for _, window := range windows {
		if !hasSeams(text, window) {
			t.Fatalf("window %d: the text has a window with no place to cut exactly", window)
		}
		got, err := countWindows(text, window)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("window %d: %d tokens, want %d", window, got, want)
		}
	}
}

// hasSeams tells whether every window of text that cutWindow cuts ends at
// a letter that a space follows.
func hasSeams(text string, window int) bool {
	for len(text) > window {
		part, rest := cutWindow(text, window)
		if rest[0] != ' ' || !isASCIILetter(part[len(part)-1]) {
			return false
		}
		text = rest
	}
	return true
}

// TestCountWorkingSetIsBounded counts a 16 MiB prompt of letters with no
// space (one pre-token, the worst case of byte-pair merging): the heap it
// grows is a small share of the text, not tens of times it.
func TestCountWorkingSetIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("counts 16 MiB: TestCountWindowsMatchesWhole covers counting a window at a time; only the heap bound on a 16 MiB text is left out")
	}
	const size = 16 << 20
	text := strings.Repeat("llmrunabcdefghij", size/16)
	tok, err := Load(DefaultEncoding)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := tok.Count(text)
	runtime.ReadMemStats(&after)
	if err != nil || n < size/16 {
		t.Fatalf("Count = %d, %v; want at least one token per 16 bytes", n, err)
	}
	if grown := after.HeapSys - before.HeapSys; grown > 6*size {
		t.Errorf("counting %d bytes grew the heap by %d bytes (%.1f× the text), want at most 6× (the text, which stays live, and the collector's slack)", size, grown, float64(grown)/size)
	}
}
