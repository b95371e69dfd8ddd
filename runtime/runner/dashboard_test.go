package runner_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// runWithDashboard starts a run of the script source against the
// built-in simulator with the dashboard d, its errors to stderr, and
// returns the page's address once its banner names it, and the channel
// of the run's outcome.
func runWithDashboard(t *testing.T, ctx context.Context, name, source string, d dashboard.Config, stderr io.Writer) (string, <-chan runner.Outcome) {
	t.Helper()
	stdout := newWatched(`output: +dashboard (http://\S+/)`)
	ended := make(chan runner.Outcome, 1)
	go func() {
		ended <- runner.Run(ctx, runner.Config{
			Engine:      engine.Config{ScriptPath: name, Source: []byte(source), Seed: 1},
			NoPreflight: true, Stdout: stdout, Stderr: stderr, Version: "test", Dashboard: &d,
		})
	}()
	select {
	case <-stdout.seen:
	case o := <-ended:
		t.Fatalf("the run ended (%v) before its banner named its dashboard:\n%s\n%s", o.Verdict, stdout, stderr)
	}
	return regexp.MustCompile(`output: +dashboard (http://\S+/)`).FindStringSubmatch(stdout.String())[1], ended
}

// A run against the built-in simulator serves its dashboard at the
// address its banner names: headless Chromium loads the page with no
// console error, and two screenshots taken events apart differ in the
// charts, which grow. The screenshots stay in the temp dir (and are
// copied to /tmp/dash-*.png when LLMRUN_KEEP_SCREENSHOTS is set) to be
// looked at.
func TestDashboardOfARunShowsItsChartsGrowInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	stderr := newWatched(`^$`)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	url, ended := runWithDashboard(t, ctx, "chat.js", chatScript, dashboard.Config{Addr: "127.0.0.1:0", Period: 200 * time.Millisecond}, stderr)
	// The test follows the stream itself to know when the run has sent
	// more figures, rather than sleep.
	next := follow(t, ctx, url)
	waitFor := func(n int) {
		t.Helper()
		for range n {
			next("an event with requests", func(ev dashboard.Event) bool { return ev.All.Requests > 0 })
		}
	}
	waitFor(3)
	first := screenshot(t, bin, url, "dash-first.png", 900)
	waitFor(5)
	second := screenshot(t, bin, url, "dash-second.png", 900)

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

// screenshot is a screenshot of the page at url, 1280 pixels wide and
// height high, taken in the test's temp dir, and copied to the system's
// temp dir when LLMRUN_KEEP_SCREENSHOTS is set, to be looked at.
func screenshot(t *testing.T, bin, url, name string, height int) image.Image {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	img := browsertest.Screenshot(t, bin, url, path, 1280, height)
	if os.Getenv("LLMRUN_KEEP_SCREENSHOTS") != "" {
		if b, err := os.ReadFile(path); err == nil {
			os.WriteFile(filepath.Join(os.TempDir(), name), b, 0o644)
		}
	}
	return img
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

// follow reads the events of the dashboard at url; its function reads on
// until an event satisfies until and returns it, failing the test if
// the stream ends first.
func follow(t *testing.T, ctx context.Context, url string) func(what string, until func(dashboard.Event) bool) dashboard.Event {
	t.Helper()
	return openEvents(t, ctx, url+"events").next
}

// eventStream is a dashboard's stream of events (its /events) as a test
// reads it, with every line read so far.
type eventStream struct {
	t      *testing.T
	stream *bufio.Scanner
	read   bytes.Buffer
}

// openEvents opens the stream of events at url, closed when the test
// ends.
func openEvents(t *testing.T, ctx context.Context, url string) *eventStream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	stream := bufio.NewScanner(resp.Body)
	stream.Buffer(nil, dashboard.MaxEventSize+64)
	return &eventStream{t: t, stream: stream}
}

// next reads on until an event satisfies until and returns it, failing
// the test if the stream ends first.
func (s *eventStream) next(what string, until func(dashboard.Event) bool) dashboard.Event {
	s.t.Helper()
	for s.stream.Scan() {
		s.read.Write(s.stream.Bytes())
		s.read.WriteByte('\n')
		data, ok := bytes.CutPrefix(s.stream.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var ev dashboard.Event
		if err := json.Unmarshal(data, &ev); err != nil {
			s.t.Fatalf("event %s: %v", data, err)
		}
		if until(ev) {
			return ev
		}
	}
	s.t.Fatalf("the dashboard's stream ended before %s: %v\n%s", what, s.stream.Err(), s.read.Bytes())
	return dashboard.Event{}
}

// twoScenarios runs a closed-loop and an arrival-rate scenario for as
// long as the test lets them, under three thresholds: the first fails
// from the fifth request, the others hold.
const twoScenarios = `
import llm from 'llm';
export const options = {
  scenarios: {
    chat: { executor: 'constant-vus', vus: 2, duration: '30m' },
    batch: { executor: 'constant-arrival-rate', rate: 5, timeUnit: '1s', duration: '30m', preAllocatedVUs: 2, exec: 'batch' },
  },
  thresholds: {
    llm_requests: ['count<5'],
    llm_ttft: ['p(99)<60000'],
    'llm_e2e{scenario:chat}': ['p(90)<60000'],
  },
};
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 8 });
}
export function batch() {
  llm.stream({ messages: [{ role: 'user', content: 'Sum up.' }], max_tokens: 16 });
}
`

// A run of two scenarios under thresholds shows, in headless Chromium
// with no console error, the thresholds' live verdicts (the failing one
// red, counted on its line), the ITL charts and the arrival-rate
// scenario's lag, and charts that change between two screenshots taken
// events apart (kept for a person to look at with
// LLMRUN_KEEP_SCREENSHOTS, as /tmp/dash-live-*.png).
func TestDashboardShowsThresholdsITLAndLagLiveInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	stderr := newWatched(`^$`)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	url, ended := runWithDashboard(t, ctx, "two.js", twoScenarios, dashboard.Config{Addr: "127.0.0.1:0", Period: 250 * time.Millisecond}, stderr)
	next := follow(t, ctx, url)
	ev := next("a threshold failed and both scenarios measured ITL and lag", func(ev dashboard.Event) bool {
		failed := 0
		for _, th := range ev.Thresholds {
			if !th.Passed {
				failed++
			}
		}
		itl, lagged := 0, 0
		for _, s := range ev.Scenarios {
			if s.ITL.P50 > 0 {
				itl++
			}
			if s.Lagged > 0 {
				lagged++
			}
		}
		return len(ev.Thresholds) == 3 && failed == 1 && itl == 2 && lagged == 1
	})
	if th := ev.Thresholds[0]; th.Metric != "llm_requests" || th.Value == nil || *th.Value < 5 || th.Unit != "requests" {
		t.Errorf("the failing threshold reads %+v, want llm_requests observed at 5 or more requests", th)
	}
	if th := ev.Thresholds[1]; th.Unit != "ms" {
		t.Errorf("the TTFT threshold reads %+v, want its value in ms", th)
	}

	dom := string(browsertest.Run(t, bin, url, "--dump-dom"))
	for _, want := range []string{
		`Thresholds so far: 1 of 3 not met`,
		`<tr class="fail"><td>llm_requests count&lt;5</td>`,
		`<td>llm_ttft p(99)&lt;60000</td>`,
		`<h2>ITL (ms)</h2>`,
		`<h2>arrival lag (mean) (ms)</h2>`,
		`<button class="">batch</button>`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page does not show %s", want)
		}
	}
	for _, unit := range []string{`<td>llm_ttft p\(99\)&lt;60000</td><td>[0-9.]+ ms</td>`, `<td>llm_requests count&lt;5</td><td>[0-9.]+ requests</td>`} {
		if !regexp.MustCompile(unit).MatchString(dom) {
			t.Errorf("the page shows no value with its unit matching %s", unit)
		}
	}
	if strings.Contains(dom, `id="health" style="display: block`) {
		t.Logf("the client's health warned during the test (the machine is loaded): %s", dom[strings.Index(dom, `id="health"`):][:300])
	}

	first := screenshot(t, bin, url, "dash-live-first.png", 1400)
	// Eight periods later (two seconds), each with requests ended.
	for range 8 {
		next("a period with requests", func(ev dashboard.Event) bool { return ev.All.Requests > 0 })
	}
	second := screenshot(t, bin, url, "dash-live-second.png", 1400)
	if differing(first, second, image.Rect(0, 150, 1280, 1000)) == 0 {
		t.Errorf("the charts of two screenshots taken 8 events apart are the same")
	}
	cancel()
	if o := <-ended; o.Verdict != runner.Interrupted {
		t.Errorf("verdict %v, want interrupted (the test stopped the run)\n%s", o.Verdict, stderr)
	}
}

// threeLevels is a concurrency sweep of three levels of a second each,
// chained, judged against a TTFT p99 objective.
const threeLevels = `
import llm from 'llm';
const level = (n, after) => ({ executor: 'constant-vus', vus: n, duration: '1s', startAfter: after, tags: { concurrency: String(n) } });
export const options = {
  scenarios: { c1: level(1), c2: level(2, 'c1'), c3: level(3, 'c2') },
  slo: { ttft_p99: 5000 },
};
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 8 });
}
`

// A sweep's levels reach the dashboard as each ends: its events carry
// one level while the second runs, two while the third runs, three at
// the end; and the capacity tab, loaded in headless Chromium from the
// events up to each of those, draws a curve of as many points, with the
// SLO's line and a row per level.
func TestDashboardSweepCurveGainsAPointAsEachLevelEnds(t *testing.T) {
	bin := browsertest.Chromium(t)
	record := filepath.Join(t.TempDir(), "sweep.dash.gz")
	var stderr strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	url, ended := runWithDashboard(t, ctx, "sweep.js", threeLevels, dashboard.Config{Addr: "127.0.0.1:0", Period: 100 * time.Millisecond, Record: record}, &stderr)
	next := follow(t, ctx, url)
	running := func(ev dashboard.Event, name string) bool {
		for _, s := range ev.Scenarios {
			if s.Name == name {
				return s.Phase == string(engine.PhaseRunning)
			}
		}
		return false
	}
	for k, name := range []string{"c1", "c2"} {
		ev := next("level "+name+" ended", func(ev dashboard.Event) bool { return len(ev.Levels) > k })
		if len(ev.Levels) != k+1 || ev.Levels[k].Scenario != name || ev.Levels[k].TokRate <= 0 || ev.SLO == nil || ev.SLO.TTFTP99 != 5000 {
			t.Fatalf("the first event with %d levels has %+v (SLO %+v), want %s's figures last", k+1, ev.Levels, ev.SLO, name)
		}
		following := []string{"c2", "c3"}[k]
		ev = next(following+" running", func(ev dashboard.Event) bool { return running(ev, following) })
		if len(ev.Levels) != k+1 {
			t.Errorf("while %s runs the event has %d levels, want %d", following, len(ev.Levels), k+1)
		}
	}
	last := next("the run's end", func(ev dashboard.Event) bool { return ev.Done })
	if len(last.Levels) != 3 || last.Levels[2].Scenario != "c3" || last.Levels[2].Verdict != "met" {
		t.Errorf("the last event's levels are %+v, want c1, c2, c3, each meeting the SLO", last.Levels)
	}
	if o := <-ended; o.Verdict != runner.Passed {
		t.Fatalf("verdict %v, want passed\n%s", o.Verdict, &stderr)
	}

	events, err := dashboard.ReadRecording(record)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 3; k++ {
		upTo := slices.IndexFunc(events, func(ev dashboard.Event) bool { return len(ev.Levels) == k })
		if upTo < 0 {
			t.Fatalf("the recording has no event with %d levels", k)
		}
		dom := replayedPage(t, bin, events[:upTo+1], "capacity")
		if got := strings.Count(dom, `class="level-point"`); got != k {
			t.Errorf("with %d levels ended the curve has %d points", k, got)
		}
		if got := strings.Count(dom, "<tr class=\"\"><td>"); got != k {
			t.Errorf("with %d levels ended the levels table has %d rows", k, got)
		}
		if !strings.Contains(dom, `class="slo"`) || !strings.Contains(dom, "SLO TTFT p99 5000 ms") {
			t.Errorf("with %d levels the curve has no SLO line", k)
		}
	}
}

// replayedPage is the DOM of a tab of a dashboard that served events, as
// headless Chromium builds it (failing on a console error); with
// LLMRUN_KEEP_SCREENSHOTS, a screenshot of it is kept in the temp dir,
// named after the tab and the last event's time.
func replayedPage(t *testing.T, bin string, events []dashboard.Event, tab string) string {
	t.Helper()
	d, err := dashboard.Listen(dashboard.Config{Addr: "127.0.0.1:0", Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	replayed := make(chan struct{})
	go func() {
		d.Replay(ctx, events, 0)
		close(replayed)
	}()
	defer func() {
		cancel()
		<-replayed
	}()
	if os.Getenv("LLMRUN_KEEP_SCREENSHOTS") != "" {
		name := fmt.Sprintf("dash-%s-%d.png", tab, len(events[len(events)-1].Levels))
		browsertest.Screenshot(t, bin, d.URL()+"#"+tab, filepath.Join(os.TempDir(), name), 1280, 800)
	}
	return string(browsertest.Run(t, bin, d.URL()+"#"+tab, "--dump-dom"))
}

// The client's health warnings show in red under the header while the
// last event has any, and the GPUs' energy per output token is charted on
// the server tab.
func TestDashboardShowsHealthWarningsAndEnergy(t *testing.T) {
	bin := browsertest.Chromium(t)
	power := 300.0
	event := func(t float64, joules float64, health ...string) dashboard.Event {
		return dashboard.Event{V: dashboard.Version, Elapsed: t, Period: 1, Health: health, JoulesPerToken: &joules,
			Scenarios: []dashboard.Scenario{{Name: "chat", Phase: "running"}},
			Servers:   []dashboard.Server{{Kind: "gpu", URL: "nvidia-smi", Power: &power}}}
	}
	warning := "llmrun's process used 97 % of its 2 CPUs"
	warned := []dashboard.Event{event(1, 0.5), event(2, 0.6, warning)}
	dom := replayedPage(t, bin, warned, "all")
	if !strings.Contains(dom, `<div id="health" style="display: block;">The client may not have kept up: `+warning+`</div>`) {
		t.Errorf("the page does not show the health warning:\n%s", dom)
	}
	dom = replayedPage(t, bin, append(warned, event(3, 0.7)), "server")
	if !strings.Contains(dom, `<div id="health" style="display: none;"></div>`) {
		t.Errorf("the page shows a health warning the last event does not have")
	}
	if !strings.Contains(dom, "<h2>GPU energy per output token (J/token)</h2>") {
		t.Errorf("the server tab has no chart of the energy per token")
	}
}

// searchScript searches the concurrency within a TTFT p99 objective no
// level misses, a second a level, for 4 seconds of levels at most.
const searchScript = `
import llm from 'llm';
export const options = {
  scenarios: { chat: { executor: 'constant-vus', vus: 1, duration: '1s' } },
  slo: { ttft_p99: 60000 },
  capacity: { search: { start: 1, max: 64, step: '1s', maxStep: '1s', budget: '4s' } },
};
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 8 });
}
`

// A capacity search's levels reach the dashboard as each round is judged,
// while the next runs.
func TestDashboardSearchLevelsArriveAsEachRoundEnds(t *testing.T) {
	var stderr strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	url, ended := runWithDashboard(t, ctx, "search.js", searchScript, dashboard.Config{Addr: "127.0.0.1:0", Period: 100 * time.Millisecond}, &stderr)
	next := follow(t, ctx, url)
	ev := next("the first round judged", func(ev dashboard.Event) bool { return len(ev.Levels) > 0 })
	if ev.Done || ev.Levels[0].Variable != "concurrency" || ev.Levels[0].Level != 1 || ev.Levels[0].Scenario != "chat@1" || ev.SLO == nil {
		t.Errorf("the first event with levels (done %v) has %+v, SLO %+v; want the round at concurrency 1 while the search goes on", ev.Done, ev.Levels, ev.SLO)
	}
	last := next("the run's end", func(ev dashboard.Event) bool { return ev.Done })
	if len(last.Levels) < 2 {
		t.Errorf("the last event has %d levels, want every round's (2 or more in 4 s)", len(last.Levels))
	}
	for _, l := range last.Levels {
		if l.Verdict != "met" && l.Verdict != "missed" && l.Verdict != "inconclusive" {
			t.Errorf("the search's level %g has the verdict %q, want its round's", l.Level, l.Verdict)
		}
	}
	if o := <-ended; o.Verdict != runner.Passed {
		t.Fatalf("verdict %v, want passed\n%s", o.Verdict, &stderr)
	}
}

// abortedScript is aborted by its threshold once three requests ended.
const abortedScript = `
import llm from 'llm';
export const options = {
  scenarios: { chat: { executor: 'constant-vus', vus: 2, duration: '30m' } },
  thresholds: { llm_requests: [{ threshold: 'count<3', abortOnFail: true }] },
};
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 8 });
}
`

// A run that its abortOnFail threshold stops says so in its last event
// and on the page, which Chromium draws from the run's dashboard: the
// status names the threshold rather than only "run over", and its
// scenario shows where it was cut, not "done 100 %".
func TestDashboardSaysWhyARunAbortedByAThresholdEnded(t *testing.T) {
	bin := browsertest.Chromium(t)
	stderr := newWatched(`^$`)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	url, ended := runWithDashboard(t, ctx, "aborted.js", abortedScript,
		dashboard.Config{Addr: "127.0.0.1:0", Period: 200 * time.Millisecond, Linger: 3 * time.Minute}, stderr)
	last := follow(t, ctx, url)("the run's last event", func(ev dashboard.Event) bool { return ev.Done })
	const why = "aborted by its threshold llm_requests count<3 (abortOnFail)"
	if last.End != why {
		t.Errorf("the last event's end is %q, want %q", last.End, why)
	}
	if s := last.Scenarios[0]; s.Phase != "interrupted" || s.Progress >= 1 {
		t.Errorf("the aborted scenario ends %s at %.3f, want interrupted short of 1", s.Phase, s.Progress)
	}
	dom := string(browsertest.Run(t, bin, url, "--dump-dom"))
	if want := `<span id="status" class="cut">run over: ` + html.EscapeString(why) + ` · `; !strings.Contains(dom, want) {
		t.Errorf("the page's status does not begin %q:\n%s", want, dom)
	}
	if !regexp.MustCompile(`<td>interrupted</td><td class="progress"><span class="bar">.*?</span><span class="pct">\d+ %</span>`).MatchString(dom) {
		t.Errorf("the page does not show the scenario interrupted where it was cut:\n%s", dom)
	}
	cancel()
	if o := <-ended; o.Verdict != runner.ThresholdAborted {
		t.Errorf("verdict %v, want aborted by a threshold\n%s", o.Verdict, stderr)
	}
}

// The status line gives the rates of the last 10 s while the run goes
// and of the whole run once it is over, labelled so, rather than one
// period's, which swing with the requests that happened to end in it,
// and which the run's last event, a few moments long, makes absurd. Every
// chart over the run's time spans the same time, to the last event's,
// also one whose figures stopped earlier; a server's KV cache is in %.
func TestDashboardStatusGivesRatesOverTimeAndChartsShareTheTimeAxis(t *testing.T) {
	bin := browsertest.Chromium(t)
	var events []dashboard.Event
	kv := 0.42
	for i := 1; i <= 20; i++ {
		n := int64(4 * (i % 2))
		f := dashboard.Figures{Requests: n, ReqRate: float64(n), TokRate: 100 * float64(n)}
		if i <= 10 {
			f.TTFT = dashboard.Percentiles{P50: 50, P90: 60, P99: 70}
		}
		events = append(events, dashboard.Event{V: dashboard.Version, Elapsed: float64(i), Period: 1, All: f,
			Scenarios: []dashboard.Scenario{{Name: "chat", Phase: "running", Figures: f}},
			Servers:   []dashboard.Server{{Kind: "server", URL: "http://127.0.0.1:8000/metrics", Engine: "vLLM", KVCache: &kv}}})
	}
	status := func(dom string) string {
		m := regexp.MustCompile(`<span id="status"[^>]*>(.*?)</span>`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("no status line:\n%s", dom)
		}
		return html.UnescapeString(m[1])
	}
	dom := replayedPage(t, bin, events, "all")
	if got, want := status(dom), "running · 20s · 2.00 req/s · 200 tok/s (last 10s)"; got != want {
		t.Errorf("while the run goes the status is %q, want %q", got, want)
	}
	if n, charts := strings.Count(dom, ">20s</text>"), strings.Count(dom, `<div class="chart">`); n != charts || charts < 6 {
		t.Errorf("%d of the %d charts end their time axis at the last event's 20s", n, charts)
	}
	// Periods that do not fall on whole seconds: the last 10 s are still
	// called so, not "last 11s" for the one period that straddles their start.
	jittered := slices.Clone(events)
	for i := range jittered {
		jittered[i].Elapsed += 0.55
	}
	jittered[19].Elapsed, jittered[19].Period = 20.5, 0.95
	if got := status(replayedPage(t, bin, jittered, "all")); !strings.HasSuffix(got, " tok/s (last 10s)") {
		t.Errorf("with periods off whole seconds the status is %q, want it to end (last 10s)", got)
	}
	// The server's KV cache in %, as the terminal gives it, not a fraction.
	if dom := replayedPage(t, bin, events, "server"); !strings.Contains(dom, "KV cache (% used)</h2>") || !strings.Contains(dom, ">42.0</text>") {
		t.Errorf("the server tab does not chart the KV cache's 42 %%:\n%s", dom)
	}
	// The last event: 50 ms, one request, 100 tokens.
	f := dashboard.Figures{Requests: 1, ReqRate: 20, TokRate: 2000}
	events = append(events, dashboard.Event{V: dashboard.Version, Elapsed: 20.05, Period: 0.05, All: f, Done: true,
		Scenarios: []dashboard.Scenario{{Name: "chat", Phase: "done", Progress: 1, Figures: f}}})
	if got, want := status(replayedPage(t, bin, events, "all")), "run over · 20s · 2.04 req/s · 204 tok/s (whole run)"; got != want {
		t.Errorf("once the run is over the status is %q, want %q", got, want)
	}
}

// A chart's time label stays within the chart, also as long as "1h10m",
// and a chart of many series, a search's rounds' lag, gives each its own
// colour.
func TestDashboardChartsKeepTheirTimeLabelInsideAndTheirSeriesApart(t *testing.T) {
	bin := browsertest.Chromium(t)
	r := dashboard.NewReport()
	for i := 1; i <= 7; i++ {
		name := fmt.Sprintf("search@%d", 1<<i)
		f := dashboard.Figures{Requests: 1, ReqRate: 1, TokRate: 10, TTFT: dashboard.Percentiles{P50: 50, P90: 60, P99: 70}}
		r.Add(dashboard.Event{V: dashboard.Version, Elapsed: float64(i) * 600, Period: 600, All: f,
			Scenarios: []dashboard.Scenario{{Name: name, Phase: "running", Lagged: 3, Lag: float64(i), Figures: f}}})
	}
	var page strings.Builder
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	boxes := browsertest.Boxes(t, bin, page.String(), 1280, ".chart svg", ".chart svg text:nth-of-type(3)")
	charts, labels := boxes[".chart svg"], boxes[".chart svg text:nth-of-type(3)"]
	if len(charts) < 7 || len(labels) != len(charts) {
		t.Fatalf("%d charts with %d time labels, want 7 or more, a label each", len(charts), len(labels))
	}
	for i, c := range charts {
		if l := labels[i]; l.Left+l.Width > c.Left+c.Width+0.5 {
			t.Errorf("chart %d's time label ends at %.1f px, past the chart's right edge at %.1f px", i+1, l.Left+l.Width, c.Left+c.Width)
		}
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(page.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(browsertest.Run(t, bin, file, "--dump-dom"))
	lag := regexp.MustCompile(`(?s)<h2>arrival lag \(mean\) \(ms\)</h2><div class="legend">(.*?)</div>`).FindStringSubmatch(dom)
	if lag == nil {
		t.Fatalf("no chart of the arrival lag:\n%s", dom)
	}
	colours := map[string]bool{}
	for _, m := range regexp.MustCompile(`color:(#[0-9a-f]+)`).FindAllStringSubmatch(lag[1], -1) {
		colours[m[1]] = true
	}
	if len(colours) != 7 {
		t.Errorf("the 7 rounds' lag are drawn in %d colours: %s", len(colours), lag[1])
	}
}

// A page opened on a tab that has nothing yet, as its address may name it
// (#capacity before a sweep's first level ends, #server before a read),
// says so rather than fail on a script error.
func TestDashboardTabWithNothingYetSaysSo(t *testing.T) {
	bin := browsertest.Chromium(t)
	events := []dashboard.Event{{V: dashboard.Version, Elapsed: 1, Period: 1, Scenarios: []dashboard.Scenario{{Name: "c1", Phase: "running"}}}}
	for tab, want := range map[string]string{
		"capacity": "No level of a sweep or a capacity search has ended yet",
		"server":   "No server metrics or GPU telemetry are read yet",
	} {
		if dom := replayedPage(t, bin, events, tab); !strings.Contains(dom, want) {
			t.Errorf("the %s tab with nothing to show does not say %q:\n%s", tab, want, dom)
		}
	}
}

// A run the early stop ends (its first requests all refused with 400, a
// fault header the simulator cannot parse) says so in its last event,
// naming the error class, not the server's message.
func TestDashboardSaysARunWasStoppedEarly(t *testing.T) {
	const refused = `
import llm from 'llm';
export const options = { scenarios: { chat: { executor: 'constant-vus', vus: 2, duration: '30m' } } };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 8 }, { headers: { 'X-Llmsim-Fault': 'no such fault' } });
}
`
	stderr := newWatched(`^$`)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	// It lingers: the run may be over before the test reads its events.
	url, ended := runWithDashboard(t, ctx, "refused.js", refused,
		dashboard.Config{Addr: "127.0.0.1:0", Period: 200 * time.Millisecond, Linger: 3 * time.Minute}, stderr)
	last := follow(t, ctx, url)("the run's last event", func(ev dashboard.Event) bool { return ev.Done })
	if want := "stopped early by options.earlyStop (its requests all failed with http_4xx)"; last.End != want {
		t.Errorf("the last event's end is %q, want %q", last.End, want)
	}
	cancel()
	if o := <-ended; o.Verdict != runner.EarlyStopped {
		t.Errorf("verdict %v, want stopped early\n%s", o.Verdict, stderr)
	}
}
