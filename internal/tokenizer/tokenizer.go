package tokenizer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	tiktokenlib "github.com/tiktoken-go/tokenizer"

	"github.com/llmrun/llmrun/internal/tokenizer/hfhub"
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

// tokenizers caches loaded tokenizers by spec (an encoding name, a
// file's absolute path or "hf:" and a model id): a vocabulary is large and
// read-only, so every VU and client of a process shares one. A load that
// failed is forgotten, so that a later Load tries again.
var tokenizers = struct {
	sync.Mutex
	m map[string]*tokenizerEntry
}{m: map[string]*tokenizerEntry{}}

// tokenizerEntry is one spec's load: done is closed once tok or err is
// set; stopped tells that err came from its loader's context ending.
type tokenizerEntry struct {
	done    chan struct{}
	tok     Tokenizer
	err     error
	stopped bool
}

// hubDownloadTimeout bounds the download of a model's tokenizer.json.
const hubDownloadTimeout = 2 * time.Minute

// Load is LoadEnv with a context that is never canceled and the process's
// environment.
func Load(spec string) (Tokenizer, error) {
	return LoadEnv(context.Background(), spec, os.Getenv)
}

// LoadEnv returns the tokenizer spec names, the first that fits of:
//
//  1. one of Encodings;
//  2. an existing file: a Hugging Face tokenizer.json; an existing
//     directory (a model downloaded as a whole, as vLLM and transformers
//     take it): its tokenizer.json;
//  3. a Hugging Face model id, "ORG/NAME" or "ORG/NAME@REVISION" (see
//     IsModelID): the model's tokenizer.json from the local Hugging Face
//     cache, downloaded into it when missing, with the hub's settings
//     read from the environment getenv reads (hfhub.FromEnv); ctx bounds
//     the download.
//
// Anything else is read as a tokenizer.json path, which fails as a file
// that does not exist. Each tokenizer is loaded once per process and
// shared: a later Load of the same spec returns it whatever its
// environment, and a load that failed is tried again by the next. ctx
// ending stops a download, and a wait for another caller's load of the
// same spec.
func LoadEnv(ctx context.Context, spec string, getenv func(string) string) (Tokenizer, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("no tokenizer named: want one of %s, a Hugging Face model id (ORG/NAME) or the path of a tokenizer.json", strings.Join(Encodings, ", "))
	}
	key, load := spec, func() (Tokenizer, error) { return newTiktoken(spec) }
	if !IsEncoding(spec) {
		if isDir(spec) {
			spec = filepath.Join(spec, "tokenizer.json")
		}
		repo, isRepo := hfhub.ParseRepo(spec)
		if isRepo && !isFile(spec) {
			key, load = "hf:"+repo.String(), func() (Tokenizer, error) { return loadHub(ctx, repo, getenv) }
		} else {
			abs, err := filepath.Abs(spec)
			if err != nil {
				return nil, fmt.Errorf("tokenizer %s: %w", spec, err)
			}
			key, load = abs, func() (Tokenizer, error) { return loadFile(spec) }
		}
	}
	return loadShared(ctx, spec, key, load)
}

// load runs load for e, the entry of key, and ends the waits for it.
// A load that fails, or panics (a tokenizer file is outside input), is
// not kept: the next caller tries again, and no waiter waits forever.
func (e *tokenizerEntry) load(ctx context.Context, key string, load func() (Tokenizer, error)) {
	defer func() {
		if e.err != nil || e.tok == nil {
			if e.err == nil {
				e.err = fmt.Errorf("tokenizer %s: its load failed", key)
			}
			e.stopped = ctx.Err() != nil
			tokenizers.Lock()
			delete(tokenizers.m, key)
			tokenizers.Unlock()
		}
		close(e.done)
	}()
	e.tok, e.err = load()
}

// loadShared returns the tokenizer load makes for key (spec's), loading
// it once for every concurrent caller. A caller that waits for another's
// load stops waiting when ctx ends; when the other's load was stopped by
// its own context, the caller loads it anew.
func loadShared(ctx context.Context, spec, key string, load func() (Tokenizer, error)) (Tokenizer, error) {
	for {
		tokenizers.Lock()
		e, ok := tokenizers.m[key]
		if !ok {
			e = &tokenizerEntry{done: make(chan struct{})}
			tokenizers.m[key] = e
			tokenizers.Unlock()
			e.load(ctx, key, load)
			return e.tok, e.err
		}
		tokenizers.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("tokenizer %s: waiting for its load: %w", spec, context.Cause(ctx))
		}
		if !e.stopped {
			return e.tok, e.err
		}
	}
}

// IsModelID reports whether spec names a Hugging Face model rather than a
// file: it is not an existing file or directory, and reads "ORG/NAME" or
// "ORG/NAME@REVISION" (one '/', no leading '.' or '/', not ending in
// ".json").
func IsModelID(spec string) bool {
	_, ok := hfhub.ParseRepo(spec)
	return ok && !isFile(spec) && !isDir(spec)
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// loadFile loads the Hugging Face tokenizer.json file at path; on an
// error the Tokenizer is a nil interface, not loadHF's nil pointer in one.
func loadFile(path string) (Tokenizer, error) {
	t, err := loadHF(path)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// loadHub loads the tokenizer.json of a model of the Hugging Face hub,
// named by its model id.
func loadHub(ctx context.Context, repo hfhub.Repo, getenv func(string) string) (Tokenizer, error) {
	hub, err := hfhub.FromEnv(getenv)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", repo, err)
	}
	hub.MaxSize = hfMaxFile
	hub.Timeout = hubDownloadTimeout
	hub.Check = func(data []byte) error {
		_, err := parseHF("tokenizer.json", data)
		return err
	}
	path, err := hub.File(ctx, repo, "tokenizer.json")
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", repo, err)
	}
	t, err := loadHF(path)
	if err != nil {
		// A copy cached by another tool, or by an llmrun that cached
		// what it downloaded unread.
		return nil, fmt.Errorf("%w (the Hugging Face cache's copy of %s: delete it to download it again)", err, repo)
	}
	t.path = repo.String()
	return t, nil
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

// countWindow is the most text a tiktoken encoding counts at once: the
// codec's working set is many times the text it is given (its split
// expression holds the text as runes, and a long pre-token merges in
// tables of ~36 bytes per byte), so a long text is counted a window at a
// time and costs a bounded working set, not a multiple of its size.
const countWindow = 256 << 10

func (t *tiktoken) Count(text string) (int, error) { return t.countWindows(text, countWindow) }

// countWindows counts text a window of at most window bytes at a time.
func (t *tiktoken) countWindows(text string, window int) (int, error) {
	total := 0
	for text != "" {
		part, rest := cutWindow(text, window)
		n, err := t.codec.Count(part)
		if err != nil {
			return 0, fmt.Errorf("%s: counting: %w", t.name, err)
		}
		total, text = total+n, rest
	}
	return total, nil
}

// cutWindow splits text into a first part of at most window bytes and the
// rest. It cuts after the last ASCII letter that a space follows: no
// pre-token of cl100k_base or o200k_base holds a letter and then a space,
// and their split expressions look behind nothing, so each part splits
// (and counts) as it does within the whole text. A window with no such
// place (one pre-token longer than window, such as a run of letters with
// no space) is cut before the last character that starts in it: its
// count may then differ from the whole text's by a token or two per cut.
func cutWindow(text string, window int) (part, rest string) {
	if len(text) <= window {
		return text, ""
	}
	for i := window - 1; i > 0; i-- {
		if text[i] == ' ' && isASCIILetter(text[i-1]) {
			return text[:i], text[i:]
		}
	}
	i := window
	for i > 1 && !utf8.RuneStart(text[i]) {
		i--
	}
	return text[:i], text[i:]
}

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }
