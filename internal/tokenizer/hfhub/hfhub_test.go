package hfhub

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/tokenizer/hfhub/hfhubtest"
)

const (
	testCommit = "0123456789abcdef0123456789abcdef01234567"
	testEtag   = "89abcdef0123456789abcdef0123456789abcdef"
	testLFS    = "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeed"
	testToken  = "hf_secretTokenValue123"
)

// fakeHub is a Hugging Face hub on 127.0.0.1 that serves files, answering
// the way huggingface.co does, and counts the requests it gets.
type fakeHub struct {
	*httptest.Server
	files map[string]string // "ORG/NAME/REVISION/FILE" → contents
	// lfs serves files as huggingface.co serves LFS files: a redirect
	// carrying the commit and X-Linked-Etag, to a CDN path that does not.
	lfs bool
	// token, when set, is the bearer token the hub wants (a gated model).
	token string

	mu       sync.Mutex
	requests []*http.Request
}

func newFakeHub(t *testing.T, files map[string]string) *fakeHub {
	t.Helper()
	h := &fakeHub{files: files}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, r)
	h.mu.Unlock()
	if cdn, ok := strings.CutPrefix(r.URL.Path, "/cdn/"); ok {
		w.Write([]byte(h.files[cdn]))
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	if h.token != "" && r.Header.Get("Authorization") != "Bearer "+h.token {
		w.Header().Set("X-Error-Code", "GatedRepo")
		http.Error(w, "gated", http.StatusUnauthorized)
		return
	}
	key := parts[0] + "/" + parts[1] + "/" + parts[3] + "/" + parts[4]
	body, ok := h.files[key]
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", testCommit)
	if h.lfs {
		w.Header().Set("X-Linked-Etag", `"`+testLFS+`"`)
		w.Header().Set("ETag", `W/"`+testEtag+`"`)
		http.Redirect(w, r, "/cdn/"+key, http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+testEtag+`"`)
	w.Write([]byte(body))
}

func (h *fakeHub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.requests)
}

func (h *fakeHub) hub(t *testing.T) Hub {
	return Hub{CacheDir: t.TempDir(), Endpoint: h.URL, MaxSize: 1 << 20}
}

func TestParseRepo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		want Repo
		ok   bool
	}{
		{"meta-llama/Llama-3.1-8B-Instruct", Repo{"meta-llama/Llama-3.1-8B-Instruct", "main"}, true},
		{"Qwen/Qwen2.5-0.5B@v1.0", Repo{"Qwen/Qwen2.5-0.5B", "v1.0"}, true},
		{"org/name@refs/pr/1", Repo{"org/name", "refs/pr/1"}, true},
		{"org/name@" + testCommit, Repo{"org/name", testCommit}, true},
		{"gpt2", Repo{}, false},
		{"./org/name", Repo{}, false},
		{"/org/name", Repo{}, false},
		{"org/name/tokenizer.json", Repo{}, false},
		{"models/tokenizer.json", Repo{}, false},
		{"org/name.JSON", Repo{}, false},
		{"org--x/name", Repo{}, false},
		{"org/na..me", Repo{}, false},
		{"-org/name", Repo{}, false},
		{"org/name.", Repo{}, false},
		{"org/name@", Repo{}, false},
		{"org/name@../../etc", Repo{}, false},
		{"org/name@a//b", Repo{}, false},
		{"org/name@has space", Repo{}, false},
		{`..\x/name`, Repo{}, false},
	} {
		got, ok := ParseRepo(tc.spec)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRepo(%q) = %+v, %v; want %+v, %v", tc.spec, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tokenDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(tokenDir, "token"), []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hugeToken := filepath.Join(t.TempDir(), "huge-token")
	if err := os.WriteFile(hugeToken, make([]byte, MaxTokenFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    Hub
		wantErr string
	}{
		{"defaults", nil, Hub{CacheDir: filepath.Join(home, ".cache/huggingface/hub"), Endpoint: DefaultEndpoint}, ""},
		{"XDG_CACHE_HOME", map[string]string{"XDG_CACHE_HOME": "/x"}, Hub{CacheDir: "/x/huggingface/hub", Endpoint: DefaultEndpoint}, ""},
		{"HF_HOME", map[string]string{"HF_HOME": "/h", "XDG_CACHE_HOME": "/x"}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint}, ""},
		{"HF_HOME with ~", map[string]string{"HF_HOME": "~/hf"}, Hub{CacheDir: filepath.Join(home, "hf/hub"), Endpoint: DefaultEndpoint}, ""},
		{"HF_HUB_CACHE wins", map[string]string{"HF_HUB_CACHE": "/c", "HUGGINGFACE_HUB_CACHE": "/legacy", "HF_HOME": "/h"}, Hub{CacheDir: "/c", Endpoint: DefaultEndpoint}, ""},
		{"legacy cache", map[string]string{"HUGGINGFACE_HUB_CACHE": "/legacy", "HF_HOME": "/h"}, Hub{CacheDir: "/legacy", Endpoint: DefaultEndpoint}, ""},
		{"endpoint", map[string]string{"HF_HOME": "/h", "HF_ENDPOINT": "http://127.0.0.1:9/"}, Hub{CacheDir: "/h/hub", Endpoint: "http://127.0.0.1:9"}, ""},
		{"token", map[string]string{"HF_HOME": "/h", "HF_TOKEN": " " + testToken + " "}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint, Token: testToken}, ""},
		{"token file", map[string]string{"HF_HOME": tokenDir}, Hub{CacheDir: filepath.Join(tokenDir, "hub"), Endpoint: DefaultEndpoint, Token: testToken}, ""},
		{"HF_TOKEN_PATH", map[string]string{"HF_HOME": "/h", "HF_TOKEN_PATH": filepath.Join(tokenDir, "token")}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint, Token: testToken}, ""},
		{"no token file", map[string]string{"HF_HOME": "/h", "HF_TOKEN_PATH": filepath.Join(tokenDir, "absent")}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint}, ""},
		{"token file too large", map[string]string{"HF_HOME": "/h", "HF_TOKEN_PATH": hugeToken}, Hub{},
			"the Hugging Face token file (HF_TOKEN_PATH, else $HF_HOME/token): " + hugeToken + " is larger than 64 KiB"},
		{"token file a directory", map[string]string{"HF_HOME": "/h", "HF_TOKEN_PATH": tokenDir}, Hub{}, tokenDir + " is a directory"},
		{"HF_TOKEN wins over a bad file", map[string]string{"HF_HOME": "/h", "HF_TOKEN": testToken, "HF_TOKEN_PATH": hugeToken},
			Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint, Token: testToken}, ""},
		{"offline 1", map[string]string{"HF_HOME": "/h", "HF_HUB_OFFLINE": "1"}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint, Offline: true}, ""},
		{"offline yes", map[string]string{"HF_HOME": "/h", "HF_HUB_OFFLINE": "yes"}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint, Offline: true}, ""},
		{"offline On", map[string]string{"HF_HOME": "/h", "HF_HUB_OFFLINE": "On"}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint, Offline: true}, ""},
		{"offline true", map[string]string{"HF_HOME": "/h", "HF_HUB_OFFLINE": "TRUE"}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint, Offline: true}, ""},
		{"TRANSFORMERS_OFFLINE", map[string]string{"HF_HOME": "/h", "TRANSFORMERS_OFFLINE": "1"}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint, Offline: true}, ""},
		{"offline 0", map[string]string{"HF_HOME": "/h", "HF_HUB_OFFLINE": "0"}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint}, ""},
		{"offline no", map[string]string{"HF_HOME": "/h", "HF_HUB_OFFLINE": "no"}, Hub{CacheDir: "/h/hub", Endpoint: DefaultEndpoint}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) string {
				if k == "HOME" {
					return home
				}
				return tc.env[k]
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A file not cached is downloaded once into the hub's layout; the next
// lookup, by this Hub or an offline one, makes no request.
func TestFileDownloadsIntoTheCache(t *testing.T) {
	t.Parallel()
	for _, lfs := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "lfs"}[lfs], func(t *testing.T) {
			t.Parallel()
			fake := newFakeHub(t, map[string]string{"org/name/main/tokenizer.json": `{"model": {}}`})
			fake.lfs = lfs
			hub := fake.hub(t)
			repo, _ := ParseRepo("org/name")
			p, err := hub.File(t.Context(), repo, "tokenizer.json")
			if err != nil {
				t.Fatal(err)
			}
			requests := fake.count()
			if want := map[bool]int{false: 1, true: 2}[lfs]; requests != want {
				t.Errorf("%d requests, want %d", requests, want)
			}
			blob := map[bool]string{false: testEtag, true: testLFS}[lfs]
			dir := hfhubtest.RepoDir(hub.CacheDir, "org/name")
			if p != hfhubtest.SnapshotPath(hub.CacheDir, "org/name", testCommit, "tokenizer.json") {
				t.Errorf("path %s", p)
			}
			if link, err := os.Readlink(p); err != nil || link != filepath.Join("..", "..", "blobs", blob) {
				t.Errorf("snapshot link %q, %v", link, err)
			}
			if data, err := os.ReadFile(filepath.Join(dir, "blobs", blob)); err != nil || string(data) != `{"model": {}}` {
				t.Errorf("blob %q, %v", data, err)
			}
			if ref, err := os.ReadFile(filepath.Join(dir, "refs", "main")); err != nil || string(ref) != testCommit {
				t.Errorf("refs/main %q, %v", ref, err)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(dir, "*", "*.incomplete")); len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
			for _, h := range []Hub{hub, {CacheDir: hub.CacheDir, Endpoint: fake.URL, Offline: true}} {
				again, err := h.File(t.Context(), repo, "tokenizer.json")
				if err != nil || again != p {
					t.Errorf("from the cache: %q, %v", again, err)
				}
			}
			if fake.count() != requests {
				t.Errorf("%d requests after cached lookups, want %d", fake.count(), requests)
			}
		})
	}
}

// A revision is part of the URL, escaped as huggingface_hub escapes it; a
// branch or tag gets its ref, a commit hash none.
func TestFileRevisions(t *testing.T) {
	t.Parallel()
	fake := newFakeHub(t, map[string]string{
		"org/name/v1/tokenizer.json":                 "v1",
		"org/name/refs%2Fpr%2F1/tokenizer.json":      "pr",
		"org/name/" + testCommit + "/tokenizer.json": "commit",
	})
	for _, tc := range []struct {
		revision string
		ref      string // the ref file written; "" for none
	}{
		{"v1", "refs/v1"},
		{"refs/pr/1", "refs/refs/pr/1"},
		{testCommit, ""},
	} {
		t.Run(tc.revision, func(t *testing.T) {
			hub := fake.hub(t)
			p, err := hub.File(t.Context(), Repo{ID: "org/name", Revision: tc.revision}, "tokenizer.json")
			if err != nil {
				t.Fatal(err)
			}
			dir := hfhubtest.RepoDir(hub.CacheDir, "org/name")
			refs, _ := filepath.Glob(filepath.Join(dir, "refs", "*"))
			if tc.ref == "" {
				if len(refs) != 0 {
					t.Errorf("refs written for a commit: %v", refs)
				}
			} else if ref, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(tc.ref))); err != nil || string(ref) != testCommit {
				t.Errorf("%s: %q, %v", tc.ref, ref, err)
			}
			if p != hfhubtest.SnapshotPath(hub.CacheDir, "org/name", testCommit, "tokenizer.json") {
				t.Errorf("path %s", p)
			}
		})
	}
}

// A cache that huggingface_hub filled (blobs, a snapshot linking to one,
// refs/main) is read with no request, online or offline.
func TestFileFromAPrefilledCache(t *testing.T) {
	t.Parallel()
	fake := newFakeHub(t, nil)
	cache := t.TempDir()
	hfhubtest.Cache(t, cache, "org/name", testCommit, map[string][]byte{"tokenizer.json": []byte("cached")}, "main", "v2")
	for _, offline := range []bool{false, true} {
		hub := Hub{CacheDir: cache, Endpoint: fake.URL, Offline: offline}
		for _, spec := range []string{"org/name", "org/name@v2", "org/name@" + testCommit} {
			repo, _ := ParseRepo(spec)
			p, err := hub.File(t.Context(), repo, "tokenizer.json")
			if err != nil {
				t.Fatalf("%s (offline %v): %v", spec, offline, err)
			}
			if data, err := os.ReadFile(p); err != nil || string(data) != "cached" {
				t.Errorf("%s: %q, %v", spec, data, err)
			}
		}
	}
	if fake.count() != 0 {
		t.Errorf("%d requests for cached files", fake.count())
	}
}

// Offline, a file not cached fails without a request, saying why.
func TestFileOfflineNotCached(t *testing.T) {
	t.Parallel()
	fake := newFakeHub(t, map[string]string{"org/name/main/tokenizer.json": "{}"})
	hub := fake.hub(t)
	hub.Offline = true
	_, err := hub.File(t.Context(), Repo{ID: "org/name", Revision: "main"}, "tokenizer.json")
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") || !strings.Contains(err.Error(), "tokenizer.json of org/name") {
		t.Errorf("error %v", err)
	}
	if fake.count() != 0 {
		t.Errorf("%d requests offline", fake.count())
	}
}

// HF_TOKEN is sent as a bearer token, to the hub only, and never shows in
// an error.
func TestFileToken(t *testing.T) {
	t.Parallel()
	fake := newFakeHub(t, map[string]string{"org/gated/main/tokenizer.json": "{}"})
	fake.token = testToken
	fake.lfs = true

	hub := fake.hub(t)
	_, err := hub.File(t.Context(), Repo{ID: "org/gated", Revision: "main"}, "tokenizer.json")
	if err == nil || !strings.Contains(err.Error(), "org/gated is gated or private") || !strings.Contains(err.Error(), "set HF_TOKEN") {
		t.Errorf("without a token: %v", err)
	}

	hub.Token = testToken
	if _, err := hub.File(t.Context(), Repo{ID: "org/gated", Revision: "main"}, "tokenizer.json"); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	fake.mu.Lock()
	last := fake.requests[len(fake.requests)-2:]
	fake.mu.Unlock()
	if got := last[0].Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("hub request's Authorization %q", got)
	}

	hub.Token = "hf_wrongToken456"
	_, err = hub.File(t.Context(), Repo{ID: "org/gated", Revision: "v9"}, "tokenizer.json")
	if err == nil || !strings.Contains(err.Error(), "HF_TOKEN has no access") || strings.Contains(err.Error(), hub.Token) {
		t.Errorf("with a wrong token: %v", err)
	}
}

// What the hub refuses is explained; a file larger than MaxSize or served
// without a commit is not cached.
func TestFileErrors(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/org/repo-missing/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, "Repository not found", http.StatusUnauthorized)
	})
	mux.HandleFunc("/org/rev-missing/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		http.Error(w, "Revision not found", http.StatusNotFound)
	})
	mux.HandleFunc("/org/no-file/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not found", http.StatusNotFound)
	})
	mux.HandleFunc("/org/forbidden/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	})
	mux.HandleFunc("/org/broken/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "oops", http.StatusInternalServerError)
	})
	mux.HandleFunc("/org/huge/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Repo-Commit", testCommit)
		w.Write(make([]byte, 2048))
	})
	mux.HandleFunc("/org/no-commit/", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{}"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		repo, want string
	}{
		{"org/repo-missing", "no model org/repo-missing on " + srv.URL + " (401 Unauthorized)"},
		{"org/rev-missing", `no revision "main" of org/rev-missing`},
		{"org/no-file", `no tokenizer.json in org/no-file at revision "main"`},
		{"org/forbidden", "org/forbidden is gated or private"},
		{"org/broken", "tokenizer.json of org/broken: downloading from " + srv.URL + " (500 Internal Server Error) failed"},
		{"org/huge", "larger than the 1 KiB allowed"},
		{"org/no-commit", "sent no commit hash"},
	} {
		hub := Hub{CacheDir: t.TempDir(), Endpoint: srv.URL, MaxSize: 1024}
		_, err := hub.File(t.Context(), Repo{ID: tc.repo, Revision: "main"}, "tokenizer.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.repo, err, tc.want)
		}
		if entries, _ := os.ReadDir(hub.CacheDir); len(entries) != 0 {
			t.Errorf("%s: cache written: %v", tc.repo, entries)
		}
	}
}

// A hub that does not answer within Timeout is an error that names the
// URL and the timeout, and says what to do, not a bare "context deadline
// exceeded".
func TestFileTimeout(t *testing.T) {
	t.Parallel()
	testEnded := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-testEnded:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(testEnded) })
	endpoint := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1)
	hub := Hub{CacheDir: t.TempDir(), Endpoint: endpoint, Timeout: 20 * time.Millisecond}
	_, err := hub.File(t.Context(), Repo{ID: "org/slow", Revision: "main"}, "tokenizer.json")
	if err != nil && strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows the endpoint's password: %v", err)
	}
	for _, want := range []string{"http://user:xxxxx@" + strings.TrimPrefix(srv.URL, "http://") + "/org/slow/resolve/main/tokenizer.json did not answer in full within 20ms", "HF_HUB_OFFLINE=1", "local tokenizer.json", "HF_ENDPOINT"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
	if entries, _ := os.ReadDir(hub.CacheDir); len(entries) != 0 {
		t.Errorf("cache written: %v", entries)
	}
}

// A canceled context stops a download.
func TestFileCanceled(t *testing.T) {
	t.Parallel()
	fake := newFakeHub(t, map[string]string{"org/name/main/tokenizer.json": "{}"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := fake.hub(t).File(ctx, Repo{ID: "org/name", Revision: "main"}, "tokenizer.json")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v", err)
	}
}

// No error of a download holds the token or the endpoint's credentials,
// in any form the hub echoes them.
func TestFileErrorsHoldNoSecret(t *testing.T) {
	t.Parallel()
	const (
		token = "hf_SECRETtok/abc+def=ghi"
		user  = "hubuser"
		pass  = "HubPassw0rd"
	)
	mux := http.NewServeMux()
	mux.HandleFunc("/org/broken/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "oops", http.StatusInternalServerError)
	})
	mux.HandleFunc("/org/loop/", func(w http.ResponseWriter, r *http.Request) {
		// a hub that hands the token on in its redirect, URL-encoded, and
		// never stops redirecting
		http.Redirect(w, r, r.URL.Path+"?token="+url.QueryEscape(token), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	leaks := []string{token, url.QueryEscape(token), pass,
		base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}
	for _, tc := range []struct{ repo, want string }{
		{"org/broken", "downloading from http://hubuser:xxxxx@" + host + " (500 Internal Server Error) failed"},
		{"org/loop", "redirects"},
	} {
		hub := Hub{CacheDir: t.TempDir(), Endpoint: "http://" + user + ":" + pass + "@" + host, Token: token, MaxSize: 1024}
		_, err := hub.File(t.Context(), Repo{ID: tc.repo, Revision: "main"}, "tokenizer.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v, want %q", tc.repo, err, tc.want)
		}
		for _, leak := range leaks {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: error %q holds %q", tc.repo, err, leak)
			}
		}
	}
}
