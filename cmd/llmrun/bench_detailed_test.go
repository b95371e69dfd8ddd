package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// megabyteAnswers starts a completions server on 127.0.0.1 whose every
// answer is 1 MiB of text (64 chunks of 16 KiB), and which reads the live
// heap (after a GC) when its second and its last of prompts requests
// arrive: the client then holds the answer before (the second's reading
// is thus the first to include whatever the client keeps of an answer
// while it records it). It returns its URL and those two readings, which
// are set once the last request came.
func megabyteAnswers(t *testing.T, prompts int) (url string, heaps func() (first, last uint64)) {
	t.Helper()
	chunk := fmt.Sprintf(`data: {"choices":[{"index":0,"text":%q,"finish_reason":null}]}`+"\n\n", strings.Repeat("a", 16<<10))
	var mu sync.Mutex
	var seen int
	var first, last uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		seen++
		if seen == 2 || seen == prompts {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if seen == 2 {
				first = ms.HeapAlloc
			} else {
				last = ms.HeapAlloc
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for range 64 {
			io.WriteString(w, chunk)
		}
		io.WriteString(w, `data: {"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":8,"completion_tokens":64,"total_tokens":72}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() (uint64, uint64) {
		mu.Lock()
		defer mu.Unlock()
		return first, last
	}
}

// --save-detailed does not hold every answer's text in memory until the
// end: each goes to a file beside the result as its request ends. With
// 1 MiB answers, one request at a time, the live heap when the last
// request arrives (all the others recorded) exceeds the heap at the
// second by far less than an answer per request; and the result file
// has every text whole. Not parallel: the heap is this run's alone.
func TestBenchSaveDetailedHoldsNoTexts(t *testing.T) {
	const prompts = 12
	url, heaps := megabyteAnswers(t, prompts)
	dir := t.TempDir()
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--model", "m", "--num-prompts", fmt.Sprint(prompts),
		"--max-concurrency", "1", "--random-input-len", "8", "--random-output-len", "64",
		"--save-result", "--save-detailed", "--result-dir", dir, "--result-filename", "r.json", "--no-preflight", "-q")
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	first, last := heaps()
	perRequest := (int64(last) - int64(first)) / (prompts - 2)
	t.Logf("live heap %d KiB at the second request, %d KiB at the last: %d KiB held per request", first>>10, last>>10, perRequest>>10)
	if perRequest > 256<<10 {
		t.Errorf("%d KiB held per request of 1 MiB answers, want at most 256 KiB", perRequest>>10)
	}
	r := readResult(t, filepath.Join(dir, "r.json"))
	texts, _ := r["generated_texts"].([]any)
	if len(texts) != prompts {
		t.Fatalf("%d generated_texts, want %d", len(texts), prompts)
	}
	for i, text := range texts {
		if s, _ := text.(string); len(s) != 1<<20 || strings.Trim(s, "a") != "" {
			t.Errorf("text %d: %d bytes, want the 1 MiB answer", i, len(s))
		}
	}
}
