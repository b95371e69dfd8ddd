package tokenizer

import (
	"encoding/json"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// hfCutText is long text of every kind (words, code, numbers, newlines,
// CJK, emoji, combining marks, long runs without a space, added tokens)
// with a place to cut (a letter, then a space) at least every longest+2
// bytes.
func hfCutText() (text string, longest int) {
	pieces := append(slices.Clone(hfCorpus), randomHFStrings(2000)...)
	pieces = append(pieces, "hello world held", "hello</s> world<s>", "<|endoftext|>hello", "HELLO  World", "x"+strings.Repeat("y", 500))
	for _, p := range pieces {
		longest = max(longest, len(p))
	}
	return strings.Join(pieces, "z "), longest
}

// hfVariant writes the tokenizer.json at base with its parts replaced and
// loads it.
func hfVariant(t *testing.T, base []byte, parts map[string]any) *hfTokenizer {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(base, &doc); err != nil {
		t.Fatal(err)
	}
	for k, v := range parts {
		if m, ok := v.(map[string]any); ok && k == "model" {
			model := doc["model"].(map[string]any)
			for mk, mv := range m {
				model[mk] = mv
			}
			continue
		}
		doc[k] = v
	}
	tok, err := loadHF(writeHF(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// hfWholeCount counts text whole, as Count did before it cut long texts.
func hfWholeCount(t *testing.T, tok *hfTokenizer, text string) int {
	t.Helper()
	ids, err := tok.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	return len(ids)
}

// TestHFCountWindowsMatchesWhole counts long mixed text a window at a time
// with the real tokenizer.json layouts the tests use (cl100k_base
// converted as Llama 3's file is laid out; Llama 2's SentencePiece file)
// and with their vocabularies under every other pipeline whose cuts are
// exact: the windows add up to the count of the whole text.
func TestHFCountWindowsMatchesWhole(t *testing.T) {
	sp, err := os.ReadFile("testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	cl100k, err := convertCl100kToHF()
	if err != nil {
		t.Fatal(err)
	}
	metaspace := func(scheme string, split bool) map[string]any {
		return map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}
	}
	seq := func(kind string, parts ...any) map[string]any {
		field := map[string]string{"normalizer": "normalizers", "pre_tokenizer": "pretokenizers"}[kind]
		return map[string]any{"type": "Sequence", field: parts}
	}
	text, longest := hfCutText()
	for _, tc := range []struct {
		name  string
		base  []byte
		parts map[string]any
	}{
		{"cl100k_base as Llama 3 lays it out: Split, ByteLevel", cl100k, nil},
		{"ByteLevel with GPT-2's expression", cl100k, map[string]any{"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true}}},
		{"NFC, Split with Qwen2's expression, ByteLevel", cl100k, map[string]any{
			"normalizer": map[string]any{"type": "NFC"},
			"pre_tokenizer": seq("pre_tokenizer",
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}, "behavior": "Isolated"},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}),
		}},
		{"DeepSeek-V3: three Splits, ByteLevel", cl100k, map[string]any{"pre_tokenizer": seq("pre_tokenizer",
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\p{N}{1,3}`}, "behavior": "Isolated"},
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "[一-龥぀-ゟ゠-ヿ]+"}, "behavior": "Isolated"},
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}),
		}},
		{"DeepSeek-V3's digit and CJK Splits, then Llama 2's model", sp, map[string]any{"pre_tokenizer": seq("pre_tokenizer",
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\p{N}{1,3}`}, "behavior": "Contiguous"},
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "[一-龥぀-ゟ゠-ヿ]+"}, "behavior": "Removed", "invert": true})}},
		{"Llama 2: Prepend, Replace, no pre-tokenizer", sp, nil},
		{"Metaspace, prepend first, split", sp, map[string]any{"normalizer": nil, "pre_tokenizer": metaspace("first", true)}},
		{"Metaspace, prepend always, no split", sp, map[string]any{"normalizer": nil, "pre_tokenizer": metaspace("always", false)}},
		{"NFKC, Lowercase, Strip, Metaspace first, no split", sp, map[string]any{
			"normalizer":    seq("normalizer", map[string]any{"type": "NFKC"}, map[string]any{"type": "Lowercase"}, map[string]any{"type": "Strip", "strip_left": true, "strip_right": true}),
			"pre_tokenizer": metaspace("first", false),
		}},
		{"NFD, StripAccents, Prepend, Replace", sp, map[string]any{"normalizer": seq("normalizer",
			map[string]any{"type": "NFD"}, map[string]any{"type": "StripAccents"},
			map[string]any{"type": "Prepend", "prepend": "▁"}, map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"})}},
		{"Whitespace", sp, map[string]any{"normalizer": nil, "pre_tokenizer": map[string]any{"type": "Whitespace"}}},
		{"WhitespaceSplit", sp, map[string]any{"normalizer": nil, "pre_tokenizer": map[string]any{"type": "WhitespaceSplit"}}},
		{"BertPreTokenizer", sp, map[string]any{"normalizer": nil, "pre_tokenizer": map[string]any{"type": "BertPreTokenizer"}}},
		{"Digits, Punctuation, then Llama 2's model", sp, map[string]any{"pre_tokenizer": seq("pre_tokenizer",
			map[string]any{"type": "Digits", "individual_digits": true}, map[string]any{"type": "Punctuation", "behavior": "Contiguous"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := hfVariant(t, tc.base, tc.parts)
			if !tok.cutsExact {
				t.Fatal("cutsExact is false: the pipeline would count long texts whole")
			}
			checkWindows(t, text, []int{longest + 2, 3 * longest, 64 << 10}, hfWholeCount(t, tok, text), tok.countWindows)
		})
	}
}

// TestHFCountWholeWhereCutsMayNotBeExact names pipelines whose steps may
// act across a letter and a space: they count a long text whole, to the
// exact count.
func TestHFCountWholeWhereCutsMayNotBeExact(t *testing.T) {
	sp, err := os.ReadFile("testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	var spDoc struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(sp, &spDoc); err != nil {
		t.Fatal(err)
	}
	// "o▁" and "d▁": tokens that join a letter and the space after it.
	joining := spDoc.Model.Vocab
	joining["o▁"], joining["d▁"] = 278, 279
	text := strings.Repeat("hello world, held hello ", 30000)
	for _, tc := range []struct {
		name  string
		parts map[string]any
	}{
		{"a vocabulary token joins a letter and a space", map[string]any{"model": map[string]any{"vocab": joining, "merges": []string{"▁ h", "l l", "▁h e", "ll o", "▁he llo", "▁ w", "o r", "▁w or", "l d", "▁wor ld", "e l", "o ▁", "d ▁"}}}},
		{"continuing_subword_prefix", map[string]any{"model": map[string]any{"continuing_subword_prefix": "##"}}},
		{"a Split expression not known to split at a space", map[string]any{"pre_tokenizer": map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\S+\s`}, "behavior": "Isolated"}}},
		{"a known expression with its matches merged", map[string]any{"pre_tokenizer": map[string]any{"type": "Split", "pattern": map[string]any{"Regex": hfCl100kPattern}, "behavior": "Contiguous"}}},
		{"a Replace by an expression", map[string]any{"normalizer": map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " +"}, "content": "▁"}}},
		{"a Replace of a letter", map[string]any{"normalizer": map[string]any{"type": "Replace", "pattern": map[string]any{"String": "d"}, "content": "t"}}},
		{"an added token that spans a letter and a space", map[string]any{"added_tokens": []any{map[string]any{"id": 2, "content": "o w", "normalized": false, "special": true}}}},
		{"a single-word added token that starts with a space", map[string]any{"added_tokens": []any{map[string]any{"id": 2, "content": " held", "single_word": true, "normalized": false, "special": true}}}},
		{"an added token that takes the space after its letter", map[string]any{"added_tokens": []any{map[string]any{"id": 2, "content": "held", "rstrip": true, "normalized": false, "special": true}}}},
		{"ByteLevel with a prefix space after the spaces are replaced", map[string]any{"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := hfVariant(t, sp, tc.parts)
			if tok.cutsExact {
				t.Fatal("cutsExact is true: the pipeline's steps may act across the cut")
			}
			want := hfWholeCount(t, tok, text)
			if got, err := tok.Count(text); err != nil || got != want {
				t.Errorf("Count = %d, %v; want the whole text's %d", got, err, want)
			}
		})
	}
}

// TestHFCountWorkingSetIsBounded counts a 16 MiB text of words with each
// real tokenizer.json layout: the heap it grows is a small share of the
// text, not the 56–72× counting it whole takes.
func TestHFCountWorkingSetIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("counts 16 MiB: TestHFCountWindowsMatchesWhole covers counting a window at a time; only the heap bound on a 16 MiB text is left out")
	}
	const size = 16 << 20
	chunk := strings.Join(append(slices.Clone(hfCorpus), "hello world held"), " ")
	text := strings.Repeat(chunk, size/len(chunk)+1)[:size]
	for _, tc := range []struct {
		name string
		load func() Tokenizer
	}{
		{"cl100k_base as Llama 3 lays it out", func() Tokenizer { return loadCl100kHF(t) }},
		{"Llama 2's SentencePiece layout", func() Tokenizer {
			tok, err := Load("testdata/hf/sentencepiece.json")
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := tc.load()
			// The heap held from the system: returned to it first, so
			// that an earlier subtest's heap does not hide this one's.
			held := func(m *runtime.MemStats) int64 { return int64(m.HeapSys - m.HeapReleased) }
			// Garbage collected at 10 % over the live heap, not 100 %:
			// what grows is then the working set, not the collector's
			// slack over the vocabulary and the text.
			defer debug.SetGCPercent(debug.SetGCPercent(10))
			var before, after runtime.MemStats
			debug.FreeOSMemory()
			runtime.ReadMemStats(&before)
			n, err := tok.Count(text)
			runtime.ReadMemStats(&after)
			if err != nil || n < size/16 {
				t.Fatalf("Count = %d, %v; want at least one token per 16 bytes", n, err)
			}
			grown := held(&after) - held(&before)
			t.Logf("%d tokens; the heap grew by %d bytes (%.2f× the text)", n, grown, float64(grown)/size)
			if grown > 3*size {
				t.Errorf("counting %d bytes grew the heap by %d bytes (%.1f× the text), want at most 3× (the collector's slack around a window's working set)", size, grown, float64(grown)/size)
			}
		})
	}
}
