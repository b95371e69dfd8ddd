package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmrun/llmrun/internal/tokenizer"
	"github.com/llmrun/llmrun/internal/tokenizer/hfhub/hfhubtest"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// hubRuns numbers the runs of TestRunTokenizerFromHub in the process.
var hubRuns atomic.Int64

// --tokenizer ORG/NAME downloads the model's tokenizer.json from the hub
// (HF_ENDPOINT, here a fake one on 127.0.0.1) into the Hugging Face cache
// (HF_HUB_CACHE) once; the script's tokenizer() is that tokenizer (it
// counts a text as the file does). A later run offline finds it in the
// cache.
func TestRunTokenizerFromHub(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../internal/tokenizer/testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	const text = "Hello world, hello tokenizers."
	file, err := tokenizer.Load("../../internal/tokenizer/testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := file.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	const commit = "5555555555555555555555555555555555555555"
	// The process keeps every tokenizer it loaded by model id: a run of
	// this test again (-count) takes a model id of its own.
	model := fmt.Sprintf("hub-e2e-%d/tok", hubRuns.Add(1))
	var requests atomic.Int64
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/"+model+"/resolve/main/tokenizer.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Repo-Commit", commit)
		w.Write(data)
	}))
	t.Cleanup(hub.Close)
	cache := t.TempDir()
	env := map[string]string{"HF_ENDPOINT": hub.URL, "HF_HUB_CACHE": cache, "HOME": t.TempDir()}
	script := writeScript(t, "hub.js", `
import llm from 'llm';
import { check } from 'llmrun';
import { tokenizer } from 'data';
export const options = { iterations: 2 };
export default function () {
  llm.stream({ prompt: __ENV.TEXT, max_tokens: 3 });
  check(__ENV.TEXT, {
    'the run tokenizer is the model': () => tokenizer().name === __ENV.MODEL && tokenizer(__ENV.MODEL).name === __ENV.MODEL,
    'it counts as the file does': (text) => tokenizer().count(text) === Number(__ENV.TOKENS),
  });
}`)
	run := func(model string) {
		t.Helper()
		export := filepath.Join(t.TempDir(), "summary.json")
		code, stdout, stderr := cli(t, t.Context(), env, "run", "-q", "--tokenizer", model, "-e", "MODEL="+model,
			"-e", "TEXT="+text, "-e", fmt.Sprintf("TOKENS=%d", tokens), "--summary-export", export, script)
		if code != exitcode.OK {
			t.Fatalf("--tokenizer %s: exit %d\n%s\n%s", model, code, stdout, stderr)
		}
		checks := readSummary(t, export).Checks
		if len(checks) != 2 {
			t.Errorf("--tokenizer %s: checks %+v", model, checks)
		}
		for _, c := range checks {
			if c.Passes != 2 || c.Fails != 0 {
				t.Errorf("--tokenizer %s: check %+v", model, c)
			}
		}
	}
	run(model)
	if _, err := os.Stat(hfhubtest.SnapshotPath(cache, model, commit, "tokenizer.json")); err != nil {
		t.Errorf("not cached: %v", err)
	}
	env["HF_HUB_OFFLINE"] = "1"
	run(model + "@" + commit)
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests to the hub, want 1", n)
	}
	code, _, stderr := cli(t, t.Context(), env, "run", "-q", "--tokenizer", "hub-e2e/absent", script)
	if code != exitcode.Usage || !strings.Contains(stderr, "--tokenizer: tokenizer hub-e2e/absent: tokenizer.json of hub-e2e/absent: not in the Hugging Face cache") {
		t.Errorf("offline, not cached: exit %d\n%s", code, stderr)
	}
}

// A signal during the download of --tokenizer's model stops llmrun with
// the exit code of an interrupted run, not that of a bad command line.
func TestRunTokenizerDownloadInterrupted(t *testing.T) {
	t.Parallel()
	requested := make(chan struct{})
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(requested)
		<-r.Context().Done()
	}))
	t.Cleanup(hub.Close)
	env := map[string]string{"HF_ENDPOINT": hub.URL, "HF_HUB_CACHE": t.TempDir(), "HOME": t.TempDir()}
	script := writeScript(t, "s.js", "export default function () {}\n")
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-requested
		cancel()
	}()
	code, _, stderr := cli(t, ctx, env, "run", "-q", "--tokenizer", "hub-e2e/interrupted", script)
	if code != exitcode.Interrupted || !strings.Contains(stderr, "context canceled") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// A hub download that fails in a VU shows neither HF_ENDPOINT's
// credentials nor HF_TOKEN, which the hub hands on URL-encoded in a
// redirect, on the console or in the result file.
func TestTokenizerDownloadErrorHoldsNoSecret(t *testing.T) {
	const (
		token = "hf_SECRETtok/abc+def=ghi"
		pass  = "HubPassw0rd"
	)
	model := fmt.Sprintf("hub-e2e-%d/secret", hubRuns.Add(1))
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("token") {
			http.Error(w, "oops", http.StatusInternalServerError)
			return
		}
		http.Redirect(w, r, r.URL.Path+"?token="+url.QueryEscape(token), http.StatusFound)
	}))
	t.Cleanup(hub.Close)
	endpoint := "http://hubuser:" + pass + "@" + strings.TrimPrefix(hub.URL, "http://")
	// A VU reads the hub's settings from the process's environment.
	t.Setenv("HF_ENDPOINT", endpoint)
	t.Setenv("HF_TOKEN", token)
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	script := writeScript(t, "hub.js", `
import { tokenizer } from 'data';
export const options = { iterations: 1 };
export default function () { tokenizer(__ENV.MODEL); }
`)
	export := filepath.Join(t.TempDir(), "result.json")
	code, stdout, stderr := cli(t, t.Context(), nil, "run", "-e", "MODEL="+model, "--summary-export", export, script)
	result, err := os.ReadFile(export)
	if err != nil {
		t.Fatalf("exit %d, no result file: %v\n%s", code, err, stderr)
	}
	out := stdout + stderr + string(result)
	if !strings.Contains(out, "500 Internal Server Error") {
		t.Errorf("exit %d: the hub's failure is not shown\n%s", code, out)
	}
	for _, leak := range []string{pass, token, url.QueryEscape(token)} {
		if strings.Contains(out, leak) {
			t.Errorf("the output holds %q\n%s", leak, out)
		}
	}
}
