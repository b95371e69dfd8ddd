package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/llmrun/llmrun/internal/capped"
)

// hfTokenizer is a tokenizer loaded from a Hugging Face tokenizer.json
// file: added tokens, a normalizer, a pre-tokenizer, a BPE model and a
// decoder, each run the way the Hugging Face tokenizers library runs them.
//
// Encode and Count never add special tokens: the post_processor (which
// inserts BOS, EOS or a template around the text) is ignored, so Count(text)
// is the number of tokens of the text alone. Servers add BOS and
// chat-template tokens on top of it. Added tokens written in the text
// ("<|eot_id|>") do encode to their own ID. Truncation, padding and BPE
// dropout are ignored too: encoding is deterministic.
type hfTokenizer struct {
	path string
	// raw and normalized split the added tokens out of the text, before
	// and after normalization.
	raw, normalized hfAddedMatcher
	normalizers     []hfNormalizer
	preTokenizers   []hfPreTokenizer
	model           *hfBPE
	// decoders run in order on the tokens' texts; with none, the texts
	// are joined with spaces.
	decoders []hfDecoder
	// tokens is each ID's text, for decoding; known says which IDs exist.
	tokens []string
	known  []bool
	// cutsExact says the pipeline counts a text cut where an ASCII letter
	// meets a space (cutWindow's places) piece by piece to the count of
	// the whole (see hfCutsExact); Count then counts a long text a window
	// at a time.
	cutsExact bool
	// scratch holds *hfScratch buffers reused across calls.
	scratch sync.Pool
}

// hfScratch is the working memory of one Encode or Count call.
type hfScratch struct {
	pieces, next []hfPiece
	spans        []hfSpan
	bpe          hfBPEScratch
	ids          []int
}

// hfMaxTokenID bounds the IDs of a tokenizer.json: Decode indexes a table of
// that many entries.
const hfMaxTokenID = 1 << 21

// hfMaxFile bounds the size of a tokenizer.json file: the largest public
// ones are a few tens of MiB.
const hfMaxFile = 256 << 20

// loadHF loads the Hugging Face tokenizer.json file at path.
func loadHF(path string) (*hfTokenizer, error) {
	data, err := capped.ReadFile(path, hfMaxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("unknown tokenizer %q: want one of %s, a Hugging Face model id (ORG/NAME) or the path of a tokenizer.json file (%w)",
			path, strings.Join(Encodings, ", "), err)
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	t, err := parseHF(path, data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return t, nil
}

// hfFile is the top level of a tokenizer.json file; the parts with
// several shapes stay raw until their type is known.
type hfFile struct {
	AddedTokens  []hfAddedToken  `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
	Decoder      json.RawMessage `json:"decoder"`
}

// hfAddedToken is an entry of added_tokens.
type hfAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	// Normalized defaults to !Special, as in the tokenizers library.
	Normalized *bool `json:"normalized"`
	Special    bool  `json:"special"`
}

// parseHF builds a tokenizer from data, the contents of the tokenizer.json
// file at path.
func parseHF(path string, data []byte) (*hfTokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, describeHFJSONError(data, err)
	}
	t := &hfTokenizer{path: path}
	var vocab map[string]int32
	var err error
	if t.model, vocab, err = parseHFModel(f.Model, "model"); err != nil {
		return nil, err
	}
	if t.normalizers, err = parseHFNormalizer(f.Normalizer, "normalizer"); err != nil {
		return nil, err
	}
	if t.preTokenizers, err = parseHFPreTokenizer(f.PreTokenizer, "pre_tokenizer"); err != nil {
		return nil, err
	}
	if t.decoders, err = parseHFDecoder(f.Decoder, "decoder"); err != nil {
		return nil, err
	}
	// When ByteLevel is the last pre-tokenizer, the model can work on the
	// raw bytes of the pre-tokens rather than on their byte-level
	// characters: same tokens, without rewriting every pre-token.
	if n := len(t.preTokenizers); n > 0 {
		if last, ok := t.preTokenizers[n-1].(*hfByteLevelPre); ok {
			last.mapBytes = !t.model.setByteLevel()
		}
	}
	if err := t.setAddedTokens(f.AddedTokens); err != nil {
		return nil, err
	}
	t.setTokens(vocab, f.AddedTokens)
	t.cutsExact = hfCutsExact(t)
	t.scratch.New = func() any { return new(hfScratch) }
	return t, nil
}

// setAddedTokens builds the matchers that split added tokens out of the
// text: those with normalized set are looked for, normalized, in the
// normalized text; the others in the text as given.
func (t *hfTokenizer) setAddedTokens(added []hfAddedToken) error {
	var raw, normalized []hfAdded
	for i, a := range added {
		if a.ID < 0 || a.ID >= hfMaxTokenID {
			return fmt.Errorf("added_tokens[%d].id %d is out of range [0, %d)", i, a.ID, hfMaxTokenID)
		}
		if a.Content == "" {
			continue
		}
		tok := hfAdded{content: a.Content, id: a.ID, singleWord: a.SingleWord, lstrip: a.LStrip, rstrip: a.RStrip}
		isNormalized := !a.Special
		if a.Normalized != nil {
			isNormalized = *a.Normalized
		}
		if !isNormalized {
			raw = append(raw, tok)
			continue
		}
		content, err := t.normalize(a.Content, false)
		if err != nil {
			return fmt.Errorf("added_tokens[%d]: normalizing %q: %w", i, a.Content, err)
		}
		if content == "" {
			continue
		}
		tok.content = content
		normalized = append(normalized, tok)
	}
	t.raw = newHFAddedMatcher(raw)
	t.normalized = newHFAddedMatcher(normalized)
	return nil
}

// setTokens fills the ID-to-text table Decode reads: the model's
// vocabulary, overridden by the added tokens.
func (t *hfTokenizer) setTokens(vocab map[string]int32, added []hfAddedToken) {
	n := 0
	for _, id := range vocab {
		n = max(n, int(id)+1)
	}
	for _, a := range added {
		n = max(n, a.ID+1)
	}
	t.tokens = make([]string, n)
	t.known = make([]bool, n)
	for tok, id := range vocab {
		t.tokens[id], t.known[id] = tok, true
	}
	for _, a := range added {
		t.tokens[a.ID], t.known[a.ID] = a.Content, true
	}
}

func (t *hfTokenizer) Name() string { return t.path }

func (t *hfTokenizer) Encode(text string) ([]int, error) {
	sc := t.scratch.Get().(*hfScratch)
	defer t.scratch.Put(sc)
	// Text runs about four bytes to a token.
	ids, err := t.encode(text, false, make([]int, 0, len(text)/4+1), sc)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding: %w", t.path, err)
	}
	return ids, nil
}

// Count counts a text of more than countWindow bytes a window at a time
// when the pipeline allows it (cutsExact): the working set of a whole
// text is many times its size (its normalized copies, the split
// expression's runes and matches, the pre-tokens, the IDs). Other
// pipelines count the text whole.
func (t *hfTokenizer) Count(text string) (int, error) {
	if !t.cutsExact {
		return t.countWindows(text, len(text))
	}
	return t.countWindows(text, countWindow)
}

// countWindows counts text a window of at most window bytes at a time,
// cut by cutWindow; each window but the first continues the one before.
func (t *hfTokenizer) countWindows(text string, window int) (int, error) {
	sc := t.scratch.Get().(*hfScratch)
	defer t.scratch.Put(sc)
	total := 0
	for continued := false; text != "" || !continued; continued = true {
		part, rest := cutWindow(text, window)
		ids, err := t.encode(part, continued, sc.ids[:0], sc)
		sc.ids = ids
		if err != nil {
			return 0, fmt.Errorf("%s: counting: %w", t.path, err)
		}
		total, text = total+len(ids), rest
	}
	return total, nil
}

// encode appends the IDs of text to ids; continued says text continues a
// text cut before it. Bytes that are not UTF-8 are encoded as U+FFFD.
func (t *hfTokenizer) encode(text string, continued bool, ids []int, sc *hfScratch) ([]int, error) {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return t.raw.encode(text, ids, func(seg string, atStart bool, ids []int) ([]int, error) {
		return t.encodeSegment(seg, atStart && !continued, atStart && continued, ids, sc)
	})
}

// encodeSegment appends the IDs of seg, a part of the text holding no
// unnormalized added token; first says whether it starts the text,
// continued whether it continues a text cut before it.
func (t *hfTokenizer) encodeSegment(seg string, first, continued bool, ids []int, sc *hfScratch) ([]int, error) {
	norm, err := t.normalize(seg, continued)
	if err != nil {
		return ids, err
	}
	return t.normalized.encode(norm, ids, func(gap string, atStart bool, ids []int) ([]int, error) {
		return t.encodePiece(hfPiece{text: gap, first: first && atStart}, ids, sc)
	})
}

// normalize runs the normalizers on s; continued says s continues a text
// cut before it.
func (t *hfTokenizer) normalize(s string, continued bool) (string, error) {
	var err error
	for _, n := range t.normalizers {
		if s, err = n.normalize(s, continued); err != nil {
			return "", err
		}
	}
	return s, nil
}

// encodePiece pre-tokenizes p and appends the model's IDs for each
// pre-token.
func (t *hfTokenizer) encodePiece(p hfPiece, ids []int, sc *hfScratch) ([]int, error) {
	cur := append(sc.pieces[:0], p)
	var err error
	for _, pt := range t.preTokenizers {
		next := sc.next[:0]
		for _, q := range cur {
			if next, err = pt.split(q, next, sc); err != nil {
				return ids, err
			}
		}
		sc.pieces, sc.next = next, cur
		cur = next
	}
	for _, q := range cur {
		ids = t.model.encode(q.text, ids, &sc.bpe)
	}
	sc.pieces = cur
	return ids, nil
}

func (t *hfTokenizer) Decode(ids []int) (string, error) {
	tokens := make([]string, len(ids))
	for i, id := range ids {
		if id < 0 || id >= len(t.tokens) || !t.known[id] {
			return "", fmt.Errorf("%s: decoding: unknown token ID %d", t.path, id)
		}
		tokens[i] = t.tokens[id]
	}
	if len(t.decoders) == 0 {
		return strings.ToValidUTF8(strings.Join(tokens, " "), "\uFFFD"), nil
	}
	var err error
	for _, d := range t.decoders {
		if tokens, err = d.decode(tokens); err != nil {
			return "", fmt.Errorf("%s: decoding: %w", t.path, err)
		}
	}
	return strings.ToValidUTF8(strings.Join(tokens, ""), "\uFFFD"), nil
}

// describeHFJSONError adds to err, an error decoding data, where in data it
// happened.
func describeHFJSONError(data []byte, err error) error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		// The offending byte is the last one read.
		off := max(syntax.Offset-1, 0)
		line, col := hfLineColumn(data, off)
		return fmt.Errorf("malformed JSON at line %d, column %d (byte %d): %w", line, col, off, err)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		line, col := hfLineColumn(data, typ.Offset)
		field := typ.Field
		if field == "" {
			field = "(the top level)"
		}
		return fmt.Errorf("field %s at line %d, column %d (byte %d): want a JSON %s, have a JSON %s", field, line, col, typ.Offset, hfJSONKind(typ.Type), typ.Value)
	}
	return fmt.Errorf("malformed JSON: %w", err)
}

// hfJSONKind names the kind of JSON value t decodes from.
func hfJSONKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	}
	return t.String()
}

// hfLineColumn returns the 1-based line and column of byte offset off in
// data.
func hfLineColumn(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// hfIsNull says whether raw is absent or JSON null.
func hfIsNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// hfComponentType decodes the "type" field of the object raw, the part of
// tokenizer.json at path.
func hfComponentType(raw json.RawMessage, path string) (string, error) {
	var c struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if c.Type == nil {
		return "", fmt.Errorf("%s.type is missing", path)
	}
	return *c.Type, nil
}

// hfDecodeComponent decodes raw, the part of tokenizer.json at path, into v.
func hfDecodeComponent(raw json.RawMessage, path string, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// hfParseComponent parses the normalizer, pre-tokenizer or decoder raw at
// path into its steps: none when raw is absent or null, the steps of its
// parts in order when it is a Sequence (the parts listed in its array field
// seqField), and otherwise what parseType makes of it and its type.
func hfParseComponent[T any](raw json.RawMessage, path, seqField string, parseType func(raw json.RawMessage, path, typ string) ([]T, error)) ([]T, error) {
	if hfIsNull(raw) {
		return nil, nil
	}
	typ, err := hfComponentType(raw, path)
	if err != nil {
		return nil, err
	}
	if typ != "Sequence" {
		return parseType(raw, path, typ)
	}
	// The one-field struct built here decodes like a literal
	// struct{ F []json.RawMessage `json:"<seqField>"` }: the same key
	// matching and the same error text.
	seq := reflect.New(reflect.StructOf([]reflect.StructField{{
		Name: "Parts",
		Type: reflect.TypeFor[[]json.RawMessage](),
		Tag:  reflect.StructTag(fmt.Sprintf("json:%q", seqField)),
	}}))
	if err := hfDecodeComponent(raw, path, seq.Interface()); err != nil {
		return nil, err
	}
	var steps []T
	for i, part := range seq.Elem().Field(0).Interface().([]json.RawMessage) {
		s, err := hfParseComponent(part, fmt.Sprintf("%s.%s[%d]", path, seqField, i), seqField, parseType)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
	}
	return steps, nil
}

// hfUnsupported is the error for a type at path that is not implemented.
func hfUnsupported(path, typ string, supported ...string) error {
	return fmt.Errorf("%s.type %q is not supported (supported: %s)", path, typ, strings.Join(supported, ", "))
}
