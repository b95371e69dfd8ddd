package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"image"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
	"github.com/llmrun/llmrun/runtime/runner"
)

// chatScript sends short chats for as long as the test lets it.
const chatScript = `
import llm from 'llm';
export const options = { scenarios: { chat: { executor: 'constant-vus', vus: 2, duration: '30m' } } };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 8 });
}
`

// A run against the built-in simulator serves its dashboard at the
// address its banner names: headless Chromium loads the page with no
// console error, and two screenshots taken events apart differ in the
// charts, which grow. The screenshots stay in the temp dir (and are
// copied to /tmp/dash-*.png when LLMRUN_KEEP_SCREENSHOTS is set) to be
// looked at.
func TestDashboardOfARunShowsItsChartsGrowInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	stdout := newWatched(`output: +dashboard (http://\S+/)`)
	stderr := newWatched(`^$`)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ended := make(chan runner.Outcome, 1)
	go func() {
		ended <- runner.Run(ctx, runner.Config{
			Engine:      engine.Config{ScriptPath: "chat.js", Source: []byte(chatScript), Seed: 1},
			NoPreflight: true, Stdout: stdout, Stderr: stderr, Version: "test",
			Dashboard: &dashboard.Config{Addr: "127.0.0.1:0", Period: 200 * time.Millisecond},
		})
	}()
	select {
	case <-stdout.seen:
	case o := <-ended:
		t.Fatalf("the run ended (%v) before its banner named its dashboard:\n%s\n%s", o.Verdict, stdout, stderr)
	}
	url := regexp.MustCompile(`output: +dashboard (http://\S+/)`).FindStringSubmatch(stdout.String())[1]

	// The test follows the stream itself to know when the run has sent
	// more figures, rather than sleep.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewScanner(resp.Body)
	stream.Buffer(nil, dashboard.MaxEventSize+64)
	// waitFor reads events until n more have counted requests.
	waitFor := func(n int) {
		t.Helper()
		for n > 0 && stream.Scan() {
			var ev dashboard.Event
			if data, ok := strings.CutPrefix(stream.Text(), "data: "); ok {
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatalf("event %s: %v", data, err)
				}
				if ev.All.Requests > 0 {
					n--
				}
			}
		}
		if n > 0 {
			t.Fatalf("the stream ended before the run counted requests: %v\n%s", stream.Err(), stderr)
		}
	}
	dir := t.TempDir()
	shot := func(name string) image.Image {
		path := filepath.Join(dir, name)
		img := browsertest.Screenshot(t, bin, url, path, 1280, 900)
		if os.Getenv("LLMRUN_KEEP_SCREENSHOTS") != "" {
			if b, err := os.ReadFile(path); err == nil {
				os.WriteFile(filepath.Join(os.TempDir(), name), b, 0o644)
			}
		}
		return img
	}
	waitFor(3)
	first := shot("dash-first.png")
	waitFor(5)
	second := shot("dash-second.png")

	// The charts lie below the header and the progress table.
	charts := image.Rect(0, 130, 1280, 560)
	if differing(first, second, charts) == 0 {
		t.Errorf("the charts of two screenshots taken 5 events apart are the same")
	}
	cancel()
	if o := <-ended; o.Verdict != runner.Interrupted {
		t.Errorf("verdict %v, want interrupted (the test stopped the run)\n%s", o.Verdict, stderr)
	}
}

// differing counts the pixels within r that differ between a and b.
func differing(a, b image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return n
}

// A dashboard whose address is in use stops the run before it starts,
// saying which address.
func TestDashboardOnAnAddressInUseStopsTheRunBeforeItStarts(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var stdout, stderr strings.Builder
	o := runner.Run(t.Context(), runner.Config{
		Engine:      engine.Config{ScriptPath: "chat.js", Source: []byte(chatScript), Seed: 1},
		NoPreflight: true, Stdout: &stdout, Stderr: &stderr, Version: "test",
		Dashboard: &dashboard.Config{Addr: busy.Addr().String(), Period: time.Second},
	})
	if o.Verdict != runner.Errored {
		t.Errorf("verdict %v, want errored", o.Verdict)
	}
	for _, want := range []string{"dashboard: listening on " + busy.Addr().String(), "give another HOST:PORT"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not say %q", stderr.String(), want)
		}
	}
	if strings.Contains(stderr.String(), "dashboard: dashboard:") {
		t.Errorf("stderr %q says dashboard twice", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("the run started (its banner was printed):\n%s", stdout.String())
	}
}

// With a linger, the dashboard still serves the run's last figures once
// its summary is printed, until the run's context is cancelled.
func TestDashboardLingersAfterTheRun(t *testing.T) {
	const twoChats = `
import llm from 'llm';
export const options = { iterations: 2 };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4 });
}
`
	stdout := newWatched(`(?s)output: +dashboard (http://\S+/).*script two\.js \(sha256`)
	var stderr strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ended := make(chan runner.Outcome, 1)
	go func() {
		ended <- runner.Run(ctx, runner.Config{
			Engine:      engine.Config{ScriptPath: "two.js", Source: []byte(twoChats), Seed: 1},
			NoPreflight: true, Stdout: stdout, Stderr: &stderr, Version: "test",
			Dashboard: &dashboard.Config{Addr: "127.0.0.1:0", Period: time.Hour, Linger: time.Hour},
		})
	}()
	select {
	case <-stdout.seen:
	case o := <-ended:
		t.Fatalf("the run ended (%v) before its summary was printed with the dashboard still served:\n%s\n%s", o.Verdict, stdout, &stderr)
	}
	url := regexp.MustCompile(`output: +dashboard (http://\S+/)`).FindStringSubmatch(stdout.String())[1]
	// The summary is printed before the linger: the page is served, its
	// last event marked done, with the run's 2 requests. The test follows
	// the stream to its done event, which the run sends just after the
	// summary, rather than ask for the page again and again.
	waitForDone(t, ctx, url)
	page := get(t, ctx, url)
	if !strings.Contains(string(page), `"done":true`) {
		t.Errorf("the lingering page does not hold the run's last event, marked done:\n%s", page)
	}
	if !regexp.MustCompile(`"all":\{"requests":2,`).Match(page) {
		t.Errorf("the lingering page does not hold the run's last figures with its 2 requests:\n%s", page)
	}
	select {
	case o := <-ended:
		t.Fatalf("the run returned (%v) during its linger", o.Verdict)
	default:
	}
	cancel()
	if o := <-ended; o.Verdict != runner.Passed {
		t.Errorf("verdict %v, want passed (the run was over before the linger was cut)\n%s", o.Verdict, &stderr)
	}
}

// waitForDone follows the events of the dashboard at url until one is
// marked done: the run's last.
func waitForDone(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	readEvents(t, ctx, url+"events", func(ev dashboard.Event) bool { return ev.Done })
}

// get is the body of url.
func get(t *testing.T, ctx context.Context, url string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
