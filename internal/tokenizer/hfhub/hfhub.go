// Package hfhub finds a file of a Hugging Face model repository on this
// machine: in the local Hugging Face cache when it is there, else
// downloaded from the hub into that cache, laid out the way the
// huggingface_hub Python library lays it out (blobs, snapshots, refs), so
// that llmrun and Python tools share what either downloaded. It knows the
// hub's environment variables (HF_HUB_CACHE, HF_HOME, HF_ENDPOINT,
// HF_TOKEN, HF_HUB_OFFLINE) and nothing else of llmrun.
package hfhub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/internal/redact"
)

// DefaultEndpoint is the hub files are downloaded from when HF_ENDPOINT is
// unset.
const DefaultEndpoint = "https://huggingface.co"

// DefaultRevision is the revision of a Repo that names none.
const DefaultRevision = "main"

// Repo is a model repository of the hub at a revision.
type Repo struct {
	// ID is "ORG/NAME".
	ID string
	// Revision is a branch, a tag or a commit hash; DefaultRevision when
	// the spec names none.
	Revision string
}

func (r Repo) String() string {
	if r.Revision == DefaultRevision {
		return r.ID
	}
	return r.ID + "@" + r.Revision
}

// repoIDPattern is the shape of "ORG/NAME": the hub's repository names
// (letters, digits, '-', '_', '.'), neither part starting or ending with
// '-' or '.'.
var repoIDPattern = regexp.MustCompile(`^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?/[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$`)

// commitPattern is the shape of a full commit hash.
var commitPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ParseRepo reads spec as "ORG/NAME" or "ORG/NAME@REVISION". It reports
// false for anything else, and for names that read as files rather than
// models: one ending in ".json", one holding "--" or "..", which the hub
// refuses in repository names.
func ParseRepo(spec string) (Repo, bool) {
	id, rev, hasRev := strings.Cut(spec, "@")
	if !repoIDPattern.MatchString(id) || strings.Contains(id, "--") || strings.Contains(id, "..") ||
		strings.HasSuffix(strings.ToLower(id), ".json") || len(id) > 96 {
		return Repo{}, false
	}
	if !hasRev {
		return Repo{ID: id, Revision: DefaultRevision}, true
	}
	if !validRevision(rev) {
		return Repo{}, false
	}
	return Repo{ID: id, Revision: rev}, true
}

// validRevision reports whether rev can name a file under refs/ without
// leaving it: a branch or tag name may hold '/' ("refs/pr/1"), never an
// empty, "." or ".." segment, a backslash or a space.
func validRevision(rev string) bool {
	if rev == "" || len(rev) > 256 || strings.ContainsAny(rev, "\\ \t\n\r\x00") {
		return false
	}
	for _, seg := range strings.Split(rev, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Hub is where files come from: the cache directory, and the hub to
// download what the cache lacks from.
type Hub struct {
	// CacheDir is the hub cache (the directory holding models--ORG--NAME).
	CacheDir string
	// Endpoint is the hub's base URL, without a trailing slash.
	Endpoint string
	// Token, when set, is sent as a bearer token (gated and private
	// models). It never appears in an error.
	Token string
	// Offline forbids downloading: only the cache is read.
	Offline bool
	// MaxSize bounds a downloaded file; 0: no bound.
	MaxSize int64
	// Timeout bounds a download, on top of the caller's context; 0: none.
	Timeout time.Duration
	// Check, when set, reads a downloaded file's bytes before they are
	// cached, and refuses them (an error) unless they are what the file
	// must be: a file refused is not cached, so that the next run asks
	// the hub again rather than failing on the cached copy.
	Check func(data []byte) error
}

// FromEnv returns the Hub the huggingface_hub library would use under the
// environment getenv reads:
//
//   - CacheDir: HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else
//     $HF_HOME/hub, with HF_HOME defaulting to $XDG_CACHE_HOME/huggingface,
//     else ~/.cache/huggingface;
//   - Endpoint: HF_ENDPOINT, else DefaultEndpoint;
//   - Token: HF_TOKEN, else the file HF_TOKEN_PATH names, else
//     $HF_HOME/token (what `huggingface-cli login` writes);
//   - Offline: HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is 1, ON, YES or
//     TRUE, in any case.
//
// A token file that does not exist is no token; one that cannot be read,
// or holds more than MaxTokenFile bytes, is an error naming it.
func FromEnv(getenv func(string) string) (Hub, error) {
	userHome := getenv("HOME")
	if userHome == "" {
		userHome, _ = os.UserHomeDir()
	}
	expand := func(p string) string { return expandHome(p, userHome) }
	home := expand(getenv("HF_HOME"))
	if home == "" {
		cache := expand(getenv("XDG_CACHE_HOME"))
		if cache == "" {
			cache = filepath.Join(userHome, ".cache")
		}
		home = filepath.Join(cache, "huggingface")
	}
	h := Hub{
		CacheDir: firstSet(expand(getenv("HF_HUB_CACHE")), expand(getenv("HUGGINGFACE_HUB_CACHE")), filepath.Join(home, "hub")),
		Endpoint: strings.TrimRight(firstSet(getenv("HF_ENDPOINT"), DefaultEndpoint), "/"),
		Token:    strings.TrimSpace(getenv("HF_TOKEN")),
		Offline:  isTrue(firstSet(getenv("HF_HUB_OFFLINE"), getenv("TRANSFORMERS_OFFLINE"))),
	}
	if h.Token == "" {
		tokenPath := firstSet(expand(getenv("HF_TOKEN_PATH")), filepath.Join(home, "token"))
		data, err := capped.ReadFile(tokenPath, MaxTokenFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return Hub{}, fmt.Errorf("the Hugging Face token file (HF_TOKEN_PATH, else $HF_HOME/token): %w", err)
		default:
			h.Token = strings.TrimSpace(string(data))
		}
	}
	return h, nil
}

// MaxTokenFile bounds the token file FromEnv reads: a token is some 40
// bytes.
const MaxTokenFile = 64 << 10

// isTrue reports whether v is one of the values huggingface_hub reads as
// true.
func isTrue(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// expandHome replaces a leading "~" of p with home, the user's home
// directory.
func expandHome(p, home string) string {
	if home == "" || (p != "~" && !strings.HasPrefix(p, "~/")) {
		return p
	}
	return filepath.Join(home, p[1:])
}

// ErrOffline is wrapped by File's error when the file is not cached and
// the hub is offline.
var ErrOffline = errors.New("not in the Hugging Face cache and offline mode (HF_HUB_OFFLINE) is on")

// File returns the local path of filename in repo: the cached copy when
// the cache holds the revision's file, with no request made, else a copy
// downloaded from the hub into the cache. A cached branch is not checked
// for newer commits: pin a revision ("ORG/NAME@COMMIT") or delete the
// cached one to pick a newer file.
//
// Its error holds neither the token nor the endpoint's credentials, in
// any form a hub may echo them (see redact.Secrets).
func (h Hub) File(ctx context.Context, repo Repo, filename string) (string, error) {
	if p, ok := h.cached(repo, filename); ok {
		return p, nil
	}
	if h.Offline {
		return "", fmt.Errorf("%s of %s: %w (cache %s): download it while online, or unset HF_HUB_OFFLINE",
			filename, repo, ErrOffline, h.CacheDir)
	}
	p, err := h.download(ctx, repo, filename)
	if err != nil {
		return "", h.redacted(err)
	}
	return p, nil
}

// redacted is err with the hub's secrets redacted from its text: the
// token, and the password and user:password pair of the endpoint's URL.
// It still wraps err, for errors.Is.
func (h Hub) redacted(err error) error {
	var secrets redact.Secrets
	secrets.Add(h.Token)
	secrets.AddRawURL(h.Endpoint)
	return redactedError{msg: secrets.Redact(err.Error()), err: err}
}

// redactedError is an error whose text is free of secrets.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// repoDir is the repository's directory in the cache.
func (h Hub) repoDir(repo Repo) string {
	return filepath.Join(h.CacheDir, "models--"+strings.ReplaceAll(repo.ID, "/", "--"))
}

// cached returns the cached path of filename at repo's revision: a commit
// hash names its snapshot; a branch or tag names the commit its file
// under refs/ holds.
func (h Hub) cached(repo Repo, filename string) (string, bool) {
	dir := h.repoDir(repo)
	commit := repo.Revision
	if !commitPattern.MatchString(commit) {
		data, err := os.ReadFile(filepath.Join(dir, "refs", filepath.FromSlash(repo.Revision)))
		if err != nil {
			return "", false
		}
		commit = strings.TrimSpace(string(data))
		if !commitPattern.MatchString(commit) {
			return "", false
		}
	}
	p := filepath.Join(dir, "snapshots", commit, filename)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return p, true
}
