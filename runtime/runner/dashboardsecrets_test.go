package runner_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/serverwatch"
)

// secret is in every credential the run below is given; no event may
// hold it.
const secret = "s3cr3t-do-not-show"

// A run given secrets everywhere a URL, a header or an API key can carry
// them: a server-metrics URL with a password and a token in its query, a
// GPU-metrics URL likewise, a second server-metrics URL that answers
// every read with an error echoing the request (its URL, its
// credentials), an API key and a header for the LLM target, which
// answers every other request with an error echoing them. Its dashboard
// shows the targets, their failed read and the failed requests' class,
// and no update holds the secret: not the live stream, not the page, not
// the recording, not its replay.
func TestNoSecretReachesTheDashboard(t *testing.T) {
	cfg := llmsim.DefaultConfig()
	cfg.GPUs = 1
	sim, err := llmsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	echo := func(w http.ResponseWriter, r *http.Request, code int) {
		var b bytes.Buffer
		b.WriteString("you asked for " + r.URL.String() + " with ")
		r.Header.Write(&b)
		http.Error(w, b.String(), code)
	}
	var chats atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/broken/metrics":
			echo(w, r, http.StatusInternalServerError)
		case r.URL.Path == "/v1/chat/completions" && chats.Add(1)%2 == 0:
			echo(w, r, http.StatusUnauthorized)
		default:
			sim.Handler().ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	withSecrets := func(path string) string {
		return strings.Replace(srv.URL, "http://", "http://user:"+secret+"@", 1) + path + "?api_key=" + secret + "&x=1"
	}

	recording := filepath.Join(t.TempDir(), "run.dash.gz")
	stdout := newWatched(`output: +dashboard (http://\S+/)`)
	var stderr strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ended := make(chan runner.Outcome, 1)
	go func() {
		ended <- runner.Run(ctx, runner.Config{
			Engine: engine.Config{ScriptPath: "chat.js", Source: []byte(chatScript), Seed: 1,
				LLM: llm.Config{BaseURL: srv.URL + "/v1", Model: cfg.Model, APIKey: secret, Headers: map[string]string{"X-Token": secret}}},
			NoPreflight: true, Stdout: stdout, Stderr: &stderr, Version: "test",
			ServerMetrics: runner.ServerMetrics{
				Servers:  []serverwatch.Server{{URL: withSecrets("/metrics")}, {URL: withSecrets("/broken/metrics")}},
				GPUs:     []string{withSecrets("/dcgm/metrics")},
				Interval: 50 * time.Millisecond,
			},
			Dashboard: &dashboard.Config{Addr: "127.0.0.1:0", Period: 50 * time.Millisecond, Record: recording},
		})
	}()
	select {
	case <-stdout.seen:
	case o := <-ended:
		t.Fatalf("the run ended (%v) before its banner named its dashboard:\n%s\n%s", o.Verdict, stdout, &stderr)
	}
	url := regexp.MustCompile(`output: +dashboard (http://\S+/)`).FindStringSubmatch(stdout.String())[1]

	// The live stream is read until an update shows every target read
	// (the broken one failed) and requests failed; then the run stops and
	// the stream is read to its end.
	live := readEvents(t, ctx, url+"events", func(ev dashboard.Event) bool {
		return len(ev.Servers) == 3 && ev.Servers[0].Running != nil && ev.Servers[1].Failed != "" && ev.Servers[2].Power != nil && ev.All.Failed > 0
	})
	page := get(t, ctx, url)
	cancel()
	if o := <-ended; o.Verdict != runner.Interrupted {
		t.Errorf("verdict %v, want interrupted (the test stopped the run)\n%s", o.Verdict, &stderr)
	}

	// The updates show what they may: the targets' URLs redacted, the
	// failed read's kind, the requests' error class.
	var shown dashboard.Event
	for line := range bytes.Lines(live) {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(data, []byte(`"failed":"status"`)) {
			if err := json.Unmarshal(data, &shown); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(shown.Servers) != 3 || !strings.Contains(shown.Servers[1].URL, "/broken/metrics?api_key=xxxxx") ||
		!strings.Contains(shown.Servers[0].URL, "user:xxxxx@") || shown.Servers[1].Failed != "status" {
		t.Errorf("no update shows the targets redacted and the broken one's failed read: %+v", shown.Servers)
	}
	if !bytes.Contains(live, []byte(`"http_4xx":`)) {
		t.Errorf("no update counts the requests that failed with 401")
	}

	recorded := gunzip(t, recording)
	events, err := dashboard.ReadRecording(recording)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dashboard.Listen(dashboard.Config{Addr: "127.0.0.1:0", Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	replayCtx, stopReplay := context.WithCancel(t.Context())
	replayed := make(chan struct{})
	go func() {
		defer close(replayed)
		d.Replay(replayCtx, events, 0)
	}()
	defer func() { stopReplay(); <-replayed }()
	replayPage := get(t, t.Context(), d.URL())
	replayLive := readEvents(t, t.Context(), d.URL()+"events", func(ev dashboard.Event) bool { return ev.Done })

	for what, b := range map[string][]byte{"the live stream": live, "the page": page, "the recording": recorded,
		"the replayed page": replayPage, "the replayed stream": replayLive} {
		if i := bytes.Index(b, []byte(secret)); i >= 0 {
			t.Errorf("%s holds the secret: …%s…", what, b[max(0, i-200):min(len(b), i+50)])
		}
		if len(b) < 100 {
			t.Errorf("%s is %d bytes: %q", what, len(b), b)
		}
	}
}

// readEvents reads the SSE stream at url until an update satisfies
// enough, and returns what it read.
func readEvents(t *testing.T, ctx context.Context, url string, enough func(dashboard.Event) bool) []byte {
	t.Helper()
	s := openEvents(t, ctx, url)
	s.next("the update the test waits for", enough)
	return s.read.Bytes()
}

// gunzip is the decompressed content of a gzip file.
func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
