package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"image"
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
