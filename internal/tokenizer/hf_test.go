package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	tiktokenlib "github.com/tiktoken-go/tokenizer"
)

// hfCl100kPattern is cl100k_base's pre-tokenization pattern.
const hfCl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// hfCl100kSpecial are cl100k_base's special tokens, the added tokens of the
// converted file.
var hfCl100kSpecial = map[string]int{
	"<|endoftext|>":   100257,
	"<|fim_prefix|>":  100258,
	"<|fim_middle|>":  100259,
	"<|fim_suffix|>":  100260,
	"<|endofprompt|>": 100276,
}

// convertCl100kToHF writes tiktoken-go's cl100k_base as a tokenizer.json, the
// way the Hugging Face converter turns a tiktoken encoding into one (and
// how Llama 3's file is laid out): the vocabulary in the byte-level
// alphabet, every split of a token into two tokens a merge, ranked by the
// merged token, then by its halves; the tiktoken pattern as a Split, then
// ByteLevel without its own regex; ignore_merges.
func convertCl100kToHF() ([]byte, error) {
	codec, err := tiktokenlib.Get(tiktokenlib.Cl100kBase)
	if err != nil {
		return nil, err
	}
	ranks := map[string]int{}
	for id := range 100256 {
		s, err := codec.Decode([]uint{uint(id)})
		if err != nil {
			continue
		}
		ranks[s] = id
	}
	type merge struct {
		a, b         string
		rank, ra, rb int
	}
	var merges []merge
	vocab := make(map[string]int, len(ranks))
	for tok, rank := range ranks {
		vocab[hfByteLevelEncode(tok)] = rank
		for i := 1; i < len(tok); i++ {
			ra, okA := ranks[tok[:i]]
			rb, okB := ranks[tok[i:]]
			if okA && okB {
				merges = append(merges, merge{a: tok[:i], b: tok[i:], rank: rank, ra: ra, rb: rb})
			}
		}
	}
	sort.Slice(merges, func(i, j int) bool {
		x, y := merges[i], merges[j]
		if x.rank != y.rank {
			return x.rank < y.rank
		}
		if x.ra != y.ra {
			return x.ra < y.ra
		}
		return x.rb < y.rb
	})
	pairs := make([][2]string, len(merges))
	for i, m := range merges {
		pairs[i] = [2]string{hfByteLevelEncode(m.a), hfByteLevelEncode(m.b)}
	}
	var added []map[string]any
	for content, id := range hfCl100kSpecial {
		added = append(added, map[string]any{"id": id, "content": content, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
	}
	return json.Marshal(map[string]any{
		"version":      "1.0",
		"added_tokens": added,
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": hfCl100kPattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil, "end_of_word_suffix": nil,
			"fuse_unk": false, "byte_fallback": false, "ignore_merges": true, "vocab": vocab, "merges": pairs,
		},
	})
}

// hfCl100k is cl100k_base converted to a tokenizer.json and loaded, once
// per test binary.
var hfCl100k struct {
	once sync.Once
	tok  Tokenizer
	err  error
}

func loadCl100kHF(tb testing.TB) Tokenizer {
	tb.Helper()
	hfCl100k.once.Do(func() {
		data, err := convertCl100kToHF()
		if err != nil {
			hfCl100k.err = err
			return
		}
		path := filepath.Join(tb.TempDir(), "tokenizer.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			hfCl100k.err = err
			return
		}
		hfCl100k.tok, hfCl100k.err = Load(path)
	})
	if hfCl100k.err != nil {
		tb.Fatalf("converting cl100k_base: %v", hfCl100k.err)
	}
	return hfCl100k.tok
}

// hfCorpus is varied text the converted cl100k_base must encode as
// tiktoken does.
var hfCorpus = []string{
	"",
	"Hello, world!",
	"The quick brown fox jumps over the lazy dog. It's 5 o'clock; we'll see—won't we?",
	"I'M SHOUTING, THEY'RE LISTENING, YOU'VE HEARD, HE'D KNOW, SHE'LL GO.",
	"func main() {\n\tfor i := 0; i < 10; i++ {\n\t\tfmt.Println(i)\n\t}\n}\n",
	"def f(x):\n    if x:\n        return [y ** 2 for y in range(x)]\n    return None\n\n\n",
	"    indented by four\n        and eight\n",
	"3.14159265358979 1234567890 42 007 1,000,000 -17 +3e10 0xDEADBEEF",
	"!!!??? ... --- *** ### $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}} <<<>>> ~~~ ``` |||",
	"Café naïve résumé Ångström façade jalapeño Übermensch straße",
	"中文字符测试，日本語のテキスト、한국어 텍스트。",
	"Emoji: 😀🎉👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️",
	"multiple     spaces   between\twords\t\ttabs",
	"trailing whitespace   ",
	"trailing newlines\n\n\n",
	"windows\r\nline\r\nendings\r\n",
	"   leading spaces",
	"\n\n\nleading newlines",
	"mixed\u00a0nbsp\u2003em-space\u3000ideographic",
	"Привет, мир! Γειά σου Κόσμε! שלום עולם! مرحبا بالعالم!",
	"e\u0301 combining acute, a\u0308 umlaut",
	"https://example.com/path?query=value&other=1#fragment",
	`{"key": "value", "list": [1, 2, 3], "nested": {"a": null}}`,
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	strings.Repeat("ab1 ", 50) + strings.Repeat("x", 300),
}

// hfRandomAlphabet is what random test strings are drawn from.
var hfRandomAlphabet = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" +
	"     \t\n\r\n.,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`" +
	"éèüñçÅßøœ\u0301\u0308" +
	"中文字日本語のテキ한국어" +
	"😀🎉👍🏽\u200d❤️" +
	"Пример Γειά שלום مرحبا" +
	"\u00a0\u2003\u3000\u200b" +
	"'s'S'll'VE")

func randomHFStrings(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		r := make([]rune, rng.IntN(40))
		for j := range r {
			r[j] = hfRandomAlphabet[rng.IntN(len(hfRandomAlphabet))]
		}
		out[i] = string(r)
	}
	return out
}

// TestHFMatchesTiktoken checks that cl100k_base, converted to a
// tokenizer.json, encodes as tiktoken-go does and decodes back.
func TestHFMatchesTiktoken(t *testing.T) {
	hf := loadCl100kHF(t)
	tk, err := Load(string(tiktokenlib.Cl100kBase))
	if err != nil {
		t.Fatal(err)
	}
	texts := append(slices.Clone(hfCorpus), randomHFStrings(3000)...)
	mismatches := 0
	for _, text := range texts {
		want, err := tk.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := hf.Encode(text)
		if err != nil {
			t.Fatalf("Encode(%q): %v", text, err)
		}
		if !slices.Equal(got, want) {
			if mismatches++; mismatches <= 10 {
				t.Errorf("Encode(%q)\n got %v\nwant %v", text, got, want)
			}
			continue
		}
		n, err := hf.Count(text)
		if err != nil || n != len(want) {
			t.Errorf("Count(%q) = %d, %v; want %d", text, n, err, len(want))
		}
		back, err := hf.Decode(got)
		if err != nil || back != text {
			t.Errorf("Decode(Encode(%q)) = %q, %v", text, back, err)
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d texts encode differently", mismatches, len(texts))
	}
}

// TestHFAddedTokens checks that added tokens are split out of the text
// whole and decode back.
func TestHFAddedTokens(t *testing.T) {
	hf := loadCl100kHF(t)
	tk, err := Load(string(tiktokenlib.Cl100kBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		before, special, after string
	}{
		{"", "<|endoftext|>", ""},
		{"Hello", "<|endoftext|>", " world"},
		{"a ", "<|fim_prefix|>", "b"},
		{"x\n", "<|endofprompt|>", "\ny"},
	} {
		text := tc.before + tc.special + tc.after
		before, err := tk.Encode(tc.before)
		if err != nil {
			t.Fatal(err)
		}
		after, err := tk.Encode(tc.after)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Concat(before, []int{hfCl100kSpecial[tc.special]}, after)
		got, err := hf.Encode(text)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, %v; want %v", text, got, err, want)
		}
		if back, err := hf.Decode(got); err != nil || back != text {
			t.Errorf("Decode(Encode(%q)) = %q, %v", text, back, err)
		}
	}
}

// TestHFSentencePiece checks a Llama 2 / Mistral layout: no
// pre-tokenizer, the text prefixed with "▁" and its spaces replaced by
// "▁" by the normalizer, byte fallback for characters not in the
// vocabulary, and a decoder that undoes it all.
func TestHFSentencePiece(t *testing.T) {
	tok, err := Load("testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	// The vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3+b <0xbb>, then 259 ▁,
	// 260 h, 261 e, 262 l, 263 o, 264 w, 265 r, 266 d, 267 ▁h, 268 ll,
	// 269 ▁he, 270 llo, 271 ▁hello, 272 ▁w, 273 or, 274 ▁wor, 275 ld,
	// 276 ▁world, 277 el. The merges, by rank: 0 "▁ h", 1 "l l",
	// 2 "▁h e", 3 "ll o", 4 "▁he llo", 5 "▁ w", 6 "o r", 7 "▁w or",
	// 8 "l d", 9 "▁wor ld", 10 "e l".
	for _, tc := range []struct {
		name, text string
		want       []int
		// roundTrip: Decode gives the text back.
		roundTrip bool
	}{
		// "▁hello": ▁h (rank 0); then "l l" (1) beats "e l" (10), which
		// never applies; ▁he (2), llo (3), ▁hello (4).
		{"word", "hello", []int{271}, true},
		// One piece, "▁hello▁world": the first word merges as above, then
		// ▁w (5), or (6), ▁wor (7), ld (8), ▁world (9).
		{"two words", "hello world", []int{271, 276}, true},
		// "▁hello▁▁world": the first ▁ of the pair has no merge with the
		// second; the second merges into ▁world.
		{"two spaces", "hello  world", []int{271, 259, 276}, true},
		// "▁hé": ▁h (0); é is not in the vocabulary, so it is spelled by
		// its UTF-8 bytes C3 A9: <0xC3> = 3+0xC3 = 198, <0xA9> = 172.
		{"byte fallback", "hé", []int{267, 198, 172}, true},
		// "▁😀": ▁ alone, then F0 9F 98 80 as bytes.
		{"emoji", "😀", []int{259, 3 + 0xF0, 3 + 0x9F, 3 + 0x98, 3 + 0x80}, true},
		// "▁held": ▁h, ▁he, then l d merges into ld.
		{"partial", "held", []int{269, 275}, true},
		{"empty", "", nil, true},
		// Text is one piece for the model here: long enough, it merges with
		// the heap rather than the scan, to the same tokens.
		{"long", strings.TrimSpace(strings.Repeat("hello world ", 20)), slices.Repeat([]int{271, 276}, 20), true},
		// An added token is split out before normalization; each side is
		// normalized alone, so " world" becomes "▁▁world", as the
		// tokenizers library does for Llama 2 (legacy). No BOS is added.
		{"added token", "hello</s> world", []int{271, 2, 259, 276}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tok.Encode(tc.text)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Encode(%q) = %v, %v; want %v", tc.text, got, err, tc.want)
			}
			if n, err := tok.Count(tc.text); err != nil || n != len(tc.want) {
				t.Errorf("Count(%q) = %d, %v; want %d", tc.text, n, err, len(tc.want))
			}
			if !tc.roundTrip {
				return
			}
			if back, err := tok.Decode(got); err != nil || back != tc.text {
				t.Errorf("Decode(%v) = %q, %v; want %q", got, back, err, tc.text)
			}
		})
	}
	if _, err := tok.Decode([]int{100000}); err == nil || !strings.Contains(err.Error(), "100000") {
		t.Errorf("Decode of an unknown ID: err = %v", err)
	}
}

// TestHFMergeHeapMatchesScan checks that both merge loops of the BPE
// model make the same tokens, on pre-tokens of every length.
func TestHFMergeHeapMatchesScan(t *testing.T) {
	m := loadCl100kHF(t).(*hfTokenizer).model
	var sc hfBPEScratch
	for i, text := range randomHFStrings(500) {
		text = strings.Repeat(text, i%8+1)
		syms := m.units(text, &sc)
		scan := hfSymIDs(m.mergeScan(slices.Clone(syms)))
		heap := hfSymIDs(m.mergeHeap(slices.Clone(syms), &sc))
		if !slices.Equal(scan, heap) {
			t.Fatalf("merging %q: scan %v, heap %v", text, scan, heap)
		}
	}
}

func hfSymIDs(syms []hfBPESym) []int32 {
	ids := make([]int32, len(syms))
	for i, s := range syms {
		ids[i] = s.id
	}
	return ids
}

// writeHF writes a tokenizer.json of the given parts (model defaults to a
// small BPE model) and returns its path.
func writeHF(t *testing.T, parts map[string]any) string {
	t.Helper()
	doc := map[string]any{
		"model": map[string]any{
			"type":   "BPE",
			"vocab":  map[string]int{"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "<unk>": 5},
			"merges": []string{"a b", "ab c"},
		},
	}
	for k, v := range parts {
		doc[k] = v
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHFComponents checks the pre-tokenizers, normalizers, added-token
// options and model options not covered by the real layouts above, on
// small inline files.
func TestHFComponents(t *testing.T) {
	letters := map[string]int{}
	for i, r := range "abcdefghijklmnopqrstuvwxyz" {
		letters[string(r)] = i
	}
	withVocab := func(extra map[string]int, merges []string, opts map[string]any) map[string]any {
		vocab := map[string]int{}
		for k, v := range letters {
			vocab[k] = v
		}
		for k, v := range extra {
			vocab[k] = v
		}
		m := map[string]any{"type": "BPE", "vocab": vocab, "merges": append([]string{}, merges...)}
		for k, v := range opts {
			m[k] = v
		}
		return m
	}
	// Byte-level files: the 256 byte characters, then words.
	byteVocab := map[string]int{}
	for b := range 256 {
		byteVocab[hfByteLevelChars[b]] = b
	}
	byteVocab["Ġh"], byteVocab["Ġhi"], byteVocab["hi"] = 256, 257, 258
	byteMerges := [][]string{{"Ġ", "h"}, {"Ġh", "i"}, {"h", "i"}}
	isolatedDigits := map[string]any{"type": "Digits", "individual_digits": true}

	for _, tc := range []struct {
		name  string
		parts map[string]any
		text  string
		want  []int
		back  string // Decode(want); "" to skip
	}{
		{
			name: "GPT-2 ByteLevel with its regex and a prefix space",
			parts: map[string]any{
				"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true},
				"decoder":       map[string]any{"type": "ByteLevel"},
				"model":         map[string]any{"type": "BPE", "vocab": byteVocab, "merges": byteMerges},
			},
			// " hi hi!": Ġhi, Ġhi, !
			text: "hi hi!", want: []int{257, 257, '!'}, back: " hi hi!",
		},
		{
			name: "ByteLevel not last: pre-tokens rewritten before Digits",
			parts: map[string]any{
				"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
					map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
					isolatedDigits,
				}},
				"decoder": map[string]any{"type": "ByteLevel"},
				"model":   map[string]any{"type": "BPE", "vocab": byteVocab, "merges": byteMerges},
			},
			// "hi", then "Ġ12" split into "Ġ", "1", "2" (byte-level IDs
			// are the bytes).
			text: "hi 12", want: []int{258, ' ', '1', '2'}, back: "hi 12",
		},
		{
			name: "Metaspace pre-tokenizer and decoder",
			parts: map[string]any{
				"pre_tokenizer": map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
				"decoder":       map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
				"model":         withVocab(map[string]int{"▁": 26, "▁a": 27, "▁ab": 28}, []string{"▁ a", "▁a b"}, nil),
			},
			// "▁ab▁a": pre-tokens ▁ab, ▁a.
			text: "ab a", want: []int{28, 27}, back: "ab a",
		},
		{
			name: "Split behaviors: MergedWithPrevious on hyphens, Removed spaces",
			parts: map[string]any{
				"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
					map[string]any{"type": "Split", "pattern": map[string]any{"String": " "}, "behavior": "Removed"},
					map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "-+"}, "behavior": "MergedWithPrevious"},
				}},
				"model": withVocab(map[string]int{"-": 26, "a-": 27, "ab": 28}, []string{"a -", "a b"}, nil),
			},
			// Pre-tokens "a-" (the hyphen stays with the "a" before it,
			// and merges with it) and "ab".
			text: "a- ab", want: []int{27, 28},
		},
		{
			name: "Split invert with MergedWithNext",
			parts: map[string]any{
				"pre_tokenizer": map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "[a-z]+"}, "behavior": "MergedWithNext", "invert": true},
				"model":         withVocab(map[string]int{"-": 26, "-a": 27}, []string{"- a"}, nil),
			},
			// Non-letters are the matches: "-" joins the "a" after it.
			text: "b-a", want: []int{1, 27},
		},
		{
			name: "Whitespace, Lowercase, NFD and StripAccents",
			parts: map[string]any{
				"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
					map[string]any{"type": "NFD"}, map[string]any{"type": "StripAccents"}, map[string]any{"type": "Lowercase"},
				}},
				"pre_tokenizer": map[string]any{"type": "Whitespace"},
				"model":         withVocab(nil, nil, nil),
			},
			text: "Éa  B", want: []int{4, 0, 1},
		},
		{
			name: "unk_token with fuse_unk",
			parts: map[string]any{
				"model": withVocab(map[string]int{"<unk>": 26}, nil, map[string]any{"unk_token": "<unk>", "fuse_unk": true}),
			},
			text: "a12b3", want: []int{0, 26, 1, 26},
		},
		{
			name: "no unk_token: unknown characters are dropped",
			parts: map[string]any{
				"model": withVocab(nil, nil, nil),
			},
			text: "a1b", want: []int{0, 1},
		},
		{
			name: "continuing_subword_prefix and end_of_word_suffix",
			parts: map[string]any{
				"pre_tokenizer": map[string]any{"type": "WhitespaceSplit"},
				"decoder":       map[string]any{"type": "BPEDecoder", "suffix": "</w>"},
				"model": map[string]any{"type": "BPE",
					"vocab":                     map[string]int{"a": 0, "##b": 1, "##c</w>": 2, "ab": 3, "c</w>": 4, "abc</w>": 5},
					"merges":                    []string{"a ##b", "ab ##c</w>"},
					"continuing_subword_prefix": "##", "end_of_word_suffix": "</w>"},
			},
			// "abc" starts as a, ##b, ##c</w>; a merged token drops the
			// prefix of its right half: ab, then abc</w>. "c" is first and
			// last: c</w>.
			text: "abc c", want: []int{5, 4}, back: "abc c",
		},
		{
			name: "added tokens: lstrip, rstrip, single_word, normalized",
			parts: map[string]any{
				"added_tokens": []any{
					map[string]any{"id": 30, "content": "<x>", "lstrip": true, "rstrip": true, "normalized": false, "special": true},
					map[string]any{"id": 31, "content": "cab", "single_word": true, "normalized": true, "special": false},
					map[string]any{"id": 32, "content": "DD", "normalized": true, "special": false},
				},
				"normalizer":    map[string]any{"type": "Lowercase"},
				"pre_tokenizer": map[string]any{"type": "WhitespaceSplit"},
				"model":         withVocab(nil, nil, nil),
			},
			// "<x>" takes in the spaces around it; "cab" matches as a word
			// only, not inside "acab"; "DD" is lowercased like the text.
			text: "a  <x>  CAB acab dd", want: []int{0, 30, 31, 0, 2, 0, 1, 32},
		},
		{
			name: "Digits contiguous, Punctuation, Strip, Replace regex, Prepend",
			parts: map[string]any{
				"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
					map[string]any{"type": "Strip", "strip_left": true, "strip_right": true},
					map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": "x+"}, "content": "z"},
					map[string]any{"type": "Prepend", "prepend": "y"},
				}},
				"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
					map[string]any{"type": "Punctuation"},
					map[string]any{"type": "Digits", "individual_digits": false},
				}},
				"model": withVocab(map[string]int{".": 26, "1": 27, "2": 28, "12": 29, "3": 30}, []string{"1 2"}, nil),
			},
			// "yaz12.z3": "yaz", "12", ".", "z", "3".
			text: "  ax12.xx3  ", want: []int{24, 0, 25, 29, 26, 25, 30},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Load(writeHF(t, tc.parts))
			if err != nil {
				t.Fatal(err)
			}
			got, err := tok.Encode(tc.text)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Encode(%q) = %v, %v; want %v", tc.text, got, err, tc.want)
			}
			if tc.back == "" {
				return
			}
			if back, err := tok.Decode(got); err != nil || back != tc.back {
				t.Errorf("Decode(%v) = %q, %v; want %q", got, back, err, tc.back)
			}
		})
	}
}

// TestHFErrors checks that a file that cannot be loaded says which file,
// and where in it.
func TestHFErrors(t *testing.T) {
	unigram := map[string]any{"type": "Unigram", "vocab": [][]any{{"a", 0.0}}}
	for _, tc := range []struct {
		name  string
		parts map[string]any // nil: raw is the file
		raw   string
		want  string
	}{
		{name: "model type", parts: map[string]any{"model": unigram}, want: `model.type "Unigram" is not supported (supported: BPE)`},
		{name: "no model", parts: map[string]any{"model": nil}, want: "model is missing"},
		{
			name:  "pre-tokenizer type",
			parts: map[string]any{"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{map[string]any{"type": "Whitespace"}, map[string]any{"type": "UnicodeScripts"}}}},
			want:  `pre_tokenizer.pretokenizers[1].type "UnicodeScripts" is not supported`,
		},
		{name: "normalizer type", parts: map[string]any{"normalizer": map[string]any{"type": "Precompiled"}}, want: `normalizer.type "Precompiled" is not supported`},
		{name: "decoder type", parts: map[string]any{"decoder": map[string]any{"type": "WordPiece"}}, want: `decoder.type "WordPiece" is not supported`},
		{
			name:  "bad regex",
			parts: map[string]any{"pre_tokenizer": map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "(a"}, "behavior": "Isolated"}},
			want:  "pre_tokenizer.pattern.Regex",
		},
		{
			name:  "split behavior",
			parts: map[string]any{"pre_tokenizer": map[string]any{"type": "Split", "pattern": map[string]any{"String": " "}, "behavior": "Sideways"}},
			want:  `pre_tokenizer.behavior "Sideways" is not supported`,
		},
		{
			name:  "merge not in vocabulary",
			parts: map[string]any{"model": map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}, "merges": []string{"a x"}}},
			want:  `model.merges[0]: "x" is not in model.vocab`,
		},
		{
			name:  "field of the wrong type",
			parts: map[string]any{"model": map[string]any{"type": "BPE", "vocab": map[string]any{"a": "zero"}, "merges": []string{}}},
			want:  "model.vocab",
		},
		{name: "malformed JSON", raw: "{\n  \"model\": {\"type\": \"BPE\",}\n}", want: "malformed JSON at line 2, column 27"},
		{name: "truncated JSON", raw: `{"model": {"type": "BPE"`, want: "malformed JSON at line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var path string
			if tc.parts != nil {
				path = writeHF(t, tc.parts)
			} else {
				path = filepath.Join(t.TempDir(), "tokenizer.json")
				if err := os.WriteFile(path, []byte(tc.raw), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded")
			}
			prefix := fmt.Sprintf("tokenizer %s: ", path)
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant %q and %q", err, prefix, tc.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "absent", "tokenizer.json")
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestHFConcurrent encodes from many goroutines at once, for the race
// detector: the cache and the scratch pool are shared.
func TestHFConcurrent(t *testing.T) {
	hf := loadCl100kHF(t)
	texts := randomHFStrings(200)
	want := make([][]int, len(texts))
	for i, text := range texts {
		ids, err := hf.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = ids
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range texts {
				j := (i + g*25) % len(texts)
				got, err := hf.Encode(texts[j])
				if err != nil || !slices.Equal(got, want[j]) {
					t.Errorf("Encode(%q) = %v, %v; want %v", texts[j], got, err, want[j])
					return
				}
			}
		}()
	}
	wg.Wait()
}

// hfBenchText is about 30 KB of prose, code and numbers.
func hfBenchText() string {
	words := strings.Fields(`the of and to in is was for that with as on by at from his her
		which are this be have an not or had but were they their one all there been has would
		when who will more if no out so said what up its about into than them can only other
		time new some could these two may first then do any like my now over such our man me
		even most made after also did many before must through back years where much your way
		well down should because each just those people how too little state good very make
		world still own see men work long get here between both life being under never day
		same another know while last might us great old year off come since against go came
		right used take three tokenizer benchmark latency throughput request response server`)
	code := "func handle(w http.ResponseWriter, r *http.Request) {\n\tif err := r.ParseForm(); err != nil {\n\t\thttp.Error(w, err.Error(), 400)\n\t\treturn\n\t}\n}\n"
	rng := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	for sb.Len() < 30_000 {
		switch n := rng.IntN(100); {
		case n < 2:
			sb.WriteString("\n\n")
			sb.WriteString(code)
		case n < 8:
			fmt.Fprintf(&sb, " %d", rng.IntN(100000))
		case n < 14:
			sb.WriteString(". ")
			w := words[rng.IntN(len(words))]
			sb.WriteString(strings.ToUpper(w[:1]) + w[1:])
		case n < 17:
			sb.WriteString(",")
		default:
			sb.WriteString(" ")
			sb.WriteString(words[rng.IntN(len(words))])
		}
	}
	return sb.String()
}

// BenchmarkHFEncode compares cl100k_base converted to a tokenizer.json
// with tiktoken-go on the same text.
func BenchmarkHFEncode(b *testing.B) {
	text := hfBenchText()
	hf := loadCl100kHF(b)
	tk, err := Load(string(tiktokenlib.Cl100kBase))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tok  Tokenizer
	}{{"hf", hf}, {"tiktoken", tk}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.tok.Encode(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
