package tokenizer

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	tiktokenlib "github.com/tiktoken-go/tokenizer"
)

// Tokenizer turns text into token IDs and back. Implementations are safe
// for concurrent use.
type Tokenizer interface {
	// Name is the encoding's name ("cl100k_base") or the tokenizer file's
	// path.
	Name() string
	Encode(text string) ([]int, error)
	// Decode returns the text of ids; bytes that do not form valid UTF-8
	// (a token holding part of a character) become U+FFFD.
	Decode(ids []int) (string, error)
	// Count is len(Encode(text)), without keeping the IDs.
	Count(text string) (int, error)
}

// Encodings are the built-in encodings, whose vocabularies are embedded in
// the binary: nothing is downloaded.
var Encodings = []string{string(tiktokenlib.Cl100kBase), string(tiktokenlib.O200kBase)}

// DefaultEncoding is the tokenizer prompts are synthesized with when the
// script and the command line name none.
const DefaultEncoding = string(tiktokenlib.Cl100kBase)

// tokenizers caches loaded tokenizers by spec (an encoding name or a
// file's absolute path): a vocabulary is large and read-only, so every VU
// and client of a process shares one.
var tokenizers = struct {
	sync.Mutex
	m map[string]*tokenizerEntry
}{m: map[string]*tokenizerEntry{}}

type tokenizerEntry struct {
	once sync.Once
	tok  Tokenizer
	err  error
}

// Load returns the tokenizer spec names: one of Encodings, or the
// path of a Hugging Face tokenizer.json file. Each is loaded once per
// process and shared.
func Load(spec string) (Tokenizer, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("no tokenizer named: want one of %s, or the path of a tokenizer.json", strings.Join(Encodings, ", "))
	}
	key := spec
	builtin := IsEncoding(spec)
	if !builtin {
		abs, err := filepath.Abs(spec)
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", spec, err)
		}
		key = abs
	}
	tokenizers.Lock()
	e, ok := tokenizers.m[key]
	if !ok {
		e = &tokenizerEntry{}
		tokenizers.m[key] = e
	}
	tokenizers.Unlock()
	e.once.Do(func() {
		if builtin {
			e.tok, e.err = newTiktoken(spec)
		} else {
			e.tok, e.err = loadHF(spec)
		}
	})
	return e.tok, e.err
}

// IsEncoding reports whether spec names one of the built-in Encodings.
func IsEncoding(spec string) bool {
	for _, name := range Encodings {
		if spec == name {
			return true
		}
	}
	return false
}

// tiktoken is one of OpenAI's BPE encodings.
type tiktoken struct {
	name  string
	codec tiktokenlib.Codec
}

func newTiktoken(name string) (*tiktoken, error) {
	c, err := tiktokenlib.Get(tiktokenlib.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	c.SetErrorMode(tiktokenlib.ErrorModeReplace)
	return &tiktoken{name: name, codec: c}, nil
}

func (t *tiktoken) Name() string { return t.name }

func (t *tiktoken) Encode(text string) ([]int, error) {
	ids, _, err := t.codec.Encode(text)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding: %w", t.name, err)
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out, nil
}

func (t *tiktoken) Decode(ids []int) (string, error) {
	u := make([]uint, len(ids))
	for i, id := range ids {
		if id < 0 {
			return "", fmt.Errorf("%s: decoding: negative token ID %d", t.name, id)
		}
		u[i] = uint(id)
	}
	s, err := t.codec.Decode(u)
	if err != nil {
		return "", fmt.Errorf("%s: decoding: %w", t.name, err)
	}
	return s, nil
}

func (t *tiktoken) Count(text string) (int, error) {
	n, err := t.codec.Count(text)
	if err != nil {
		return 0, fmt.Errorf("%s: counting: %w", t.name, err)
	}
	return n, nil
}
