package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/tokenizer/hfhub/hfhubtest"
)

const hubTestCommit = "4444444444444444444444444444444444444444"

// testHub is a Hugging Face hub on 127.0.0.1 (startTokenizerHub).
type testHub struct {
	// env points at the hub, with an empty cache.
	env map[string]string
	// requests counts the requests it received.
	requests atomic.Int64
	// blocked receives a value when a request for a "*/blocked" model
	// arrives.
	blocked chan struct{}
	// org is the organisation of the hub's models in the test: its own,
	// since the process keeps every tokenizer it loaded by model id, and a
	// test run again (-count) must not find those of its earlier run.
	org string
}

// hubs numbers the test hubs of the process.
var hubs atomic.Int64

// model is the id of the model name in h's organisation.
func (h *testHub) model(name string) string { return h.org + "/" + name }

// hubNonTokenizers are the bodies the test hub answers 200 with for
// models that have no valid tokenizer.json, by model name.
var hubNonTokenizers = map[string]string{
	"html":    "<!DOCTYPE html><html><body>Sign in to continue</body></html>",
	"garbled": `{"model": {"type": "BPE", "vocab": {"a": 0}`,
	"empty":   "",
}

// startTokenizerHub starts a Hugging Face hub on 127.0.0.1 that serves
// testdata/hf/sentencepiece.json as the tokenizer.json of every model but
// "*/missing" (not found), "*/flaky" (a server error on the first request
// only), "*/blocked" (no answer until the request or the test ends) and
// those of hubNonTokenizers (200 with a body that is no tokenizer).
func startTokenizerHub(t *testing.T) *testHub {
	t.Helper()
	data, err := os.ReadFile("testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	h := &testHub{blocked: make(chan struct{}, 16), org: fmt.Sprintf("hub-test-%d", hubs.Add(1))}
	var flaked atomic.Bool
	testEnded := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		if strings.Contains(r.URL.Path, "/missing/") || !strings.HasSuffix(r.URL.Path, "/resolve/main/tokenizer.json") {
			http.NotFound(w, r)
			return
		}
		if strings.Contains(r.URL.Path, "/flaky/") && !flaked.Swap(true) {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		if strings.Contains(r.URL.Path, "/blocked/") {
			h.blocked <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-testEnded:
			}
			return
		}
		w.Header().Set("X-Repo-Commit", hubTestCommit)
		for model, body := range hubNonTokenizers {
			if strings.Contains(r.URL.Path, "/"+model+"/") {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, body)
				return
			}
		}
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(testEnded) })
	h.env = map[string]string{"HF_ENDPOINT": srv.URL, "HF_HUB_CACHE": t.TempDir(), "HOME": t.TempDir()}
	return h
}

func getenvOf(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// A model id loads the model's tokenizer.json from the hub once: the same
// tokenizer as the file, named by the model id.
func TestLoadModelID(t *testing.T) {
	t.Parallel()
	hub := startTokenizerHub(t)
	model := hub.model("load-model-id")
	tok, err := LoadEnv(t.Context(), model, getenvOf(hub.env))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != model {
		t.Errorf("name %q", tok.Name())
	}
	file, err := Load("testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	const text = "Hello world, hello tokenizers."
	got, err1 := tok.Encode(text)
	want, err2 := file.Encode(text)
	if err1 != nil || err2 != nil || !slices.Equal(got, want) {
		t.Errorf("encodes %v (%v), the file %v (%v)", got, err1, want, err2)
	}
	if again, err := LoadEnv(t.Context(), model+"@main", getenvOf(hub.env)); err != nil || again != tok {
		t.Errorf("loaded again: %v, %v", again, err)
	}
	if n := hub.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	snapshot := hfhubtest.SnapshotPath(hub.env["HF_HUB_CACHE"], model, hubTestCommit, "tokenizer.json")
	if _, err := os.Stat(snapshot); err != nil {
		t.Errorf("not cached: %v", err)
	}
}

// What the hub downloaded into the cache is read back offline, by another
// process (here: another revision spec of the same model, which the
// process's own table does not hold), with no request.
func TestLoadModelIDFromCacheOffline(t *testing.T) {
	t.Parallel()
	hub := startTokenizerHub(t)
	if _, err := LoadEnv(t.Context(), hub.model("offline"), getenvOf(hub.env)); err != nil {
		t.Fatal(err)
	}
	hub.env["HF_HUB_OFFLINE"] = "1"
	tok, err := LoadEnv(t.Context(), hub.model("offline")+"@"+hubTestCommit, getenvOf(hub.env))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := tok.Count("hello"); err != nil || n == 0 {
		t.Errorf("count %d, %v", n, err)
	}
	if n := hub.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	absent := hub.model("offline-absent")
	_, err = LoadEnv(t.Context(), absent, getenvOf(hub.env))
	if err == nil || !strings.Contains(err.Error(), "tokenizer "+absent+": tokenizer.json of "+absent+": not in the Hugging Face cache") ||
		!strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Errorf("offline, not cached: %v", err)
	}
	if n := hub.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestLoadModelIDErrors(t *testing.T) {
	t.Parallel()
	hub := startTokenizerHub(t)
	_, err := LoadEnv(t.Context(), hub.model("missing"), getenvOf(hub.env))
	if err == nil || !strings.Contains(err.Error(), "no tokenizer.json in "+hub.model("missing")+` at revision "main"`) {
		t.Errorf("404: %v", err)
	}
	_, err = LoadEnv(t.Context(), "hub-test-gpt2", getenvOf(hub.env))
	if err == nil || !strings.Contains(err.Error(), "a Hugging Face model id (ORG/NAME)") {
		t.Errorf("neither: %v", err)
	}
}

// An existing file or directory wins over a model id of the same
// spelling; IsModelID's rule is the same.
func TestLoadFileBeforeModelID(t *testing.T) {
	data, err := os.ReadFile("testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	hub := startTokenizerHub(t)
	t.Chdir(t.TempDir())
	if !IsModelID("hub-test/local") {
		t.Error("hub-test/local is not a model id before the file exists")
	}
	if err := os.Mkdir("hub-test", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("hub-test", "local"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if IsModelID("hub-test/local") {
		t.Error("an existing file reads as a model id")
	}
	tok, err := LoadEnv(t.Context(), "hub-test/local", getenvOf(hub.env))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != "hub-test/local" || hub.requests.Load() != 0 {
		t.Errorf("name %q, %d requests", tok.Name(), hub.requests.Load())
	}
	if _, err := Load(tok.Name()); err != nil {
		t.Error(err)
	}

	// A directory of a model downloaded whole stands for its tokenizer.json.
	if err := os.MkdirAll(filepath.Join("hub-test", "whole"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("hub-test", "whole", "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if IsModelID("hub-test/whole") {
		t.Error("an existing directory reads as a model id")
	}
	tok, err = LoadEnv(t.Context(), "hub-test/whole", getenvOf(hub.env))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != filepath.Join("hub-test", "whole", "tokenizer.json") || hub.requests.Load() != 0 {
		t.Errorf("name %q, %d requests", tok.Name(), hub.requests.Load())
	}
}

// A load that failed is not kept: the next load of the same model tries
// the hub again, and keeps what it gets.
func TestLoadModelIDRetriesAFailure(t *testing.T) {
	t.Parallel()
	hub := startTokenizerHub(t)
	flaky := hub.model("flaky")
	if _, err := LoadEnv(t.Context(), flaky, getenvOf(hub.env)); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("first load: %v, want the hub's 503", err)
	}
	tok, err := LoadEnv(t.Context(), flaky, getenvOf(hub.env))
	if err != nil {
		t.Fatalf("second load: %v", err)
	}
	if again, err := LoadEnv(t.Context(), flaky, getenvOf(hub.env)); err != nil || again != tok {
		t.Errorf("third load: %v, %v; want the second's", again, err)
	}
	if n := hub.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// A 200 whose body is no tokenizer (an HTML page, JSON cut short, an
// empty body) is an error naming the URL and is not cached: the next load
// asks the hub again, and fails the same way, rather than reading a
// cached copy of the page.
func TestLoadModelIDRefusesANonTokenizer(t *testing.T) {
	t.Parallel()
	for name, body := range hubNonTokenizers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hub := startTokenizerHub(t)
			spec := hub.model(name)
			url := hub.env["HF_ENDPOINT"] + "/" + spec + "/resolve/main/tokenizer.json"
			for load := 1; load <= 2; load++ {
				_, err := LoadEnv(t.Context(), spec, getenvOf(hub.env))
				if err == nil || !strings.Contains(err.Error(), url+" answered 200 OK with ") || !strings.Contains(err.Error(), "not a valid tokenizer.json, so nothing was cached") {
					t.Fatalf("load %d: %v, want an error naming %s", load, err, url)
				}
				if body == "" && !strings.Contains(err.Error(), "an empty body") {
					t.Errorf("load %d: %v, want it to say the body is empty", load, err)
				}
				if entries, _ := os.ReadDir(hub.env["HF_HUB_CACHE"]); len(entries) != 0 {
					t.Fatalf("load %d: the cache holds %v", load, entries)
				}
				if n := hub.requests.Load(); n != int64(load) {
					t.Errorf("load %d: %d requests to the hub, want %d", load, n, load)
				}
			}
		})
	}
}

// A cached tokenizer.json that does not parse (cached by another tool,
// or by an earlier llmrun that cached what it did not read) fails naming
// the cached file and saying how to download it again.
func TestLoadModelIDFromABrokenCache(t *testing.T) {
	t.Parallel()
	hub := startTokenizerHub(t)
	model := hub.model("broken-cache")
	hfhubtest.Cache(t, hub.env["HF_HUB_CACHE"], model, hubTestCommit, map[string][]byte{"tokenizer.json": []byte("<html>")}, "main")
	snapshot := hfhubtest.SnapshotPath(hub.env["HF_HUB_CACHE"], model, hubTestCommit, "tokenizer.json")
	_, err := LoadEnv(t.Context(), model, getenvOf(hub.env))
	if err == nil || !strings.Contains(err.Error(), snapshot) || !strings.Contains(err.Error(), "delete it to download it again") {
		t.Errorf("error %v, want it to name %s and say how to download it again", err, snapshot)
	}
}

// A context ending stops a download at once, and a wait for another
// caller's download; the next load, under a live context, downloads anew.
func TestLoadModelIDStopsWithItsContext(t *testing.T) {
	t.Parallel()
	hub := startTokenizerHub(t)
	spec := hub.model("blocked")
	stopLoader, loaded := startLoad(t, spec, hub.env)
	<-hub.blocked

	stopWaiter, waited := startLoad(t, spec, hub.env)
	stopWaiter()
	if err := <-waited; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "tokenizer "+spec+": waiting for its load") {
		t.Errorf("waiter: %v, want its cancellation", err)
	}
	stopLoader()
	if err := <-loaded; !errors.Is(err, context.Canceled) {
		t.Errorf("loader: %v, want its cancellation", err)
	}

	stopAgain, loadedAgain := startLoad(t, spec, hub.env)
	<-hub.blocked
	stopAgain()
	if err := <-loadedAgain; !errors.Is(err, context.Canceled) {
		t.Errorf("loader after a stopped one: %v, want its cancellation", err)
	}
	if n := hub.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// A caller waiting for a load that its own caller's context stopped does
// not take that cancellation for its own: it loads the tokenizer itself.
func TestLoadModelIDWaiterOutlivesAStoppedLoader(t *testing.T) {
	t.Parallel()
	hub := startTokenizerHub(t)
	spec := hub.model("blocked")
	stopLoader, loaded := startLoad(t, spec, hub.env)
	<-hub.blocked
	stopWaiter, waited := startLoad(t, spec, hub.env)
	stopLoader()
	if err := <-loaded; !errors.Is(err, context.Canceled) {
		t.Fatalf("loader: %v, want its cancellation", err)
	}
	select {
	case err := <-waited:
		t.Fatalf("the waiter returned %v, not loading the tokenizer itself", err)
	case <-hub.blocked:
	}
	stopWaiter()
	if err := <-waited; !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "waiting for its load") {
		t.Errorf("waiter: %v, want the cancellation of its own download", err)
	}
}

// startLoad loads spec from the hub of env in a goroutine, under a context
// of its own; it returns what stops that context and where the load's
// error arrives.
func startLoad(t *testing.T, spec string, env map[string]string) (stop context.CancelFunc, result <-chan error) {
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := LoadEnv(ctx, spec, getenvOf(env))
		done <- err
	}()
	return stop, done
}

// A load that panics (a tokenizer file is outside input) leaves no entry
// behind: the next load of the same key runs, and does not wait forever.
func TestLoadSharedAfterAPanic(t *testing.T) {
	const key = "test:panics-once"
	func() {
		defer func() { _ = recover() }()
		loadShared(t.Context(), key, key, func() (Tokenizer, error) { panic("a malformed file") })
	}()
	want, err := Load("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	got, err := loadShared(ctx, key, key, func() (Tokenizer, error) { return want, nil })
	if err != nil || got != want {
		t.Errorf("after a panicking load: %v, %v; want the second load's tokenizer", got, err)
	}
}
