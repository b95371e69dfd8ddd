package hfhub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/llmrun/llmrun/internal/capped"
)

// etagPattern is the shape of a blob name: the hub's ETags are a git
// SHA-1 or an LFS SHA-256, in hex.
var etagPattern = regexp.MustCompile(`^[0-9a-f]{40,64}$`)

// maxRedirects bounds the redirects a download follows (the hub sends one,
// to its CDN, for files stored with LFS).
const maxRedirects = 10

// download fetches filename at repo's revision from the hub and stores it
// in the cache: the bytes as blobs/ETAG, snapshots/COMMIT/filename linking
// to it, and refs/REVISION holding COMMIT when the revision is a branch or
// tag. Each piece is written whole or not at all, and none before the
// whole body has arrived and Check has taken it.
func (h Hub) download(ctx context.Context, repo Repo, filename string) (string, error) {
	u := h.Endpoint + "/" + repo.ID + "/resolve/" + url.PathEscape(repo.Revision) + "/" + url.PathEscape(filename)
	if h.Timeout <= 0 {
		return h.fetch(ctx, repo, filename, u)
	}
	timed, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	p, err := h.fetch(timed, repo, filename, u)
	if err != nil && ctx.Err() == nil && errors.Is(timed.Err(), context.DeadlineExceeded) {
		return "", fmt.Errorf("%s of %s: %s did not answer in full within %s: set HF_HUB_OFFLINE=1 to use the Hugging Face cache only, pass the path of a local tokenizer.json (or of the model's directory), or set HF_ENDPOINT to a hub (a mirror) that answers",
			filename, repo, shownURL(u), h.Timeout)
	}
	return p, err
}

// fetch is download's request of u, ctx bounding it.
func (h Hub) fetch(ctx context.Context, repo Repo, filename, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("%s of %s: %w", filename, repo, err)
	}
	req.Header.Set("User-Agent", "llmrun")
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	// The hub names the commit and the blob on its own response; the CDN
	// an LFS file redirects to does not: keep every hop's headers.
	var hops []http.Header
	client := &http.Client{CheckRedirect: func(next *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		hops = append(hops, next.Response.Header)
		return nil
	}}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s of %s: downloading from %s: %w", filename, repo, h.shownEndpoint(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", h.statusError(repo, filename, resp)
	}
	hops = append(hops, resp.Header)
	commit, etag := blobOf(hops)
	if commit == "" && commitPattern.MatchString(repo.Revision) {
		commit = repo.Revision
	}
	if commit == "" {
		return "", fmt.Errorf("%s of %s: %s sent no commit hash (X-Repo-Commit): is HF_ENDPOINT a Hugging Face hub?",
			filename, repo, h.shownEndpoint())
	}
	data, err := h.readBody(resp.Body)
	if err != nil {
		return "", fmt.Errorf("%s of %s: downloading from %s: %w", filename, repo, h.shownEndpoint(), err)
	}
	if h.Check != nil {
		if err := h.Check(data); err != nil {
			return "", fmt.Errorf("%s of %s: %s answered %s with %s that is not a valid %s, so nothing was cached: %w",
				filename, repo, shownURL(u), resp.Status, describeBody(resp.Header, data), filename, err)
		}
	}
	if etag == "" {
		sum := sha256.Sum256(data)
		etag = hex.EncodeToString(sum[:])
	}
	p, err := h.store(repo, filename, commit, etag, data)
	if err != nil {
		return "", fmt.Errorf("%s of %s: caching in %s: %w", filename, repo, h.CacheDir, err)
	}
	return p, nil
}

// blobOf returns the commit hash and the blob name the hops' headers give,
// from the first hop that names a commit (the hub's own response), else
// the last; either is "" when absent or malformed.
func blobOf(hops []http.Header) (commit, etag string) {
	hdr := hops[len(hops)-1]
	for _, h := range hops {
		if h.Get("X-Repo-Commit") != "" {
			hdr = h
			break
		}
	}
	commit = strings.TrimSpace(hdr.Get("X-Repo-Commit"))
	if !commitPattern.MatchString(commit) {
		commit = ""
	}
	etag = firstSet(hdr.Get("X-Linked-Etag"), hdr.Get("ETag"))
	etag = strings.Trim(strings.TrimPrefix(strings.TrimSpace(etag), "W/"), `"`)
	if !etagPattern.MatchString(etag) {
		etag = ""
	}
	return commit, etag
}

// readBody reads r whole, up to MaxSize bytes.
func (h Hub) readBody(r io.Reader) ([]byte, error) {
	if h.MaxSize <= 0 {
		return io.ReadAll(r)
	}
	data, err := io.ReadAll(io.LimitReader(r, h.MaxSize+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > h.MaxSize {
		return nil, fmt.Errorf("larger than the %s allowed: download tokenizer.json yourself and pass its path", capped.Size(h.MaxSize))
	}
	return data, nil
}

// statusError explains a response other than 200 OK, with the hub's own
// error code (X-Error-Code) when it sends one.
func (h Hub) statusError(repo Repo, filename string, resp *http.Response) error {
	code := resp.Header.Get("X-Error-Code")
	where := fmt.Sprintf("%s (%s)", h.shownEndpoint(), resp.Status)
	switch {
	case code == "GatedRepo" || resp.StatusCode == http.StatusForbidden ||
		(resp.StatusCode == http.StatusUnauthorized && code != "RepoNotFound"):
		if h.Token == "" {
			return fmt.Errorf("%s is gated or private on %s: accept its terms on the hub and set HF_TOKEN to a token with access", repo.ID, where)
		}
		return fmt.Errorf("%s is gated or private on %s and the token in HF_TOKEN has no access to it: accept its terms on the hub with that token's account", repo.ID, where)
	case code == "RepoNotFound":
		return fmt.Errorf("no model %s on %s (a private one needs HF_TOKEN)", repo.ID, where)
	case code == "RevisionNotFound":
		return fmt.Errorf("no revision %q of %s on %s", repo.Revision, repo.ID, where)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("no %s in %s at revision %q on %s", filename, repo.ID, repo.Revision, where)
	}
	return fmt.Errorf("%s of %s: downloading from %s failed", filename, repo, where)
}

// shownURL is u, a file's URL on the hub, with the password HF_ENDPOINT
// may hold hidden, for messages. (The hub's URLs have no query: the token
// travels in a header, and File's error redacts it in any form.)
func shownURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	return parsed.Redacted()
}

// describeBody names what a body is, for an error about it: empty, or
// its size and content type.
func describeBody(header http.Header, data []byte) string {
	if len(data) == 0 {
		return "an empty body"
	}
	kind := header.Get("Content-Type")
	if kind == "" {
		kind = "no content type"
	}
	return fmt.Sprintf("a body of %s (%s)", capped.Size(int64(len(data))), kind)
}

// shownEndpoint is the endpoint as messages show it: its password, if
// any, replaced with "xxxxx".
func (h Hub) shownEndpoint() string {
	u, err := url.Parse(h.Endpoint)
	if err != nil {
		return h.Endpoint // File's error redacts what it can
	}
	return u.Redacted()
}

// store writes data into the cache in the hub's layout and returns the
// snapshot's path of filename.
func (h Hub) store(repo Repo, filename, commit, etag string, data []byte) (string, error) {
	dir := h.repoDir(repo)
	blob := filepath.Join(dir, "blobs", etag)
	if err := writeAtomic(blob, data); err != nil {
		return "", err
	}
	snapshot := filepath.Join(dir, "snapshots", commit, filename)
	if err := linkAtomic(blob, snapshot, data); err != nil {
		return "", err
	}
	if repo.Revision != commit {
		ref := filepath.Join(dir, "refs", filepath.FromSlash(repo.Revision))
		if err := writeAtomic(ref, []byte(commit)); err != nil {
			return "", err
		}
	}
	return snapshot, nil
}

// writeAtomic writes data to path through a temporary file renamed over
// it, so that a reader sees the old file or the new one, never a part.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.incomplete")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		// On disk before its name is: after a crash the cache holds the
		// whole file or none, never an empty blob that offline runs read.
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// linkAtomic makes path a relative symbolic link to blob, as the hub's
// cache does, renamed into place; where links cannot be made, path gets a
// copy of the blob's data instead.
func linkAtomic(blob, path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(path), blob)
	if err != nil {
		return writeAtomic(path, data)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.incomplete")
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return writeAtomic(path, data)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
