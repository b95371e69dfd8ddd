package main

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// shortRunScript makes a few short requests, long enough for a few
// updates at a period of 100 ms.
const shortRunScript = "import llm from 'llm';\nexport const options = { vus: 2, iterations: 12 };\n" +
	"export default function () { llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 16 }); }\n"

// recordShortRun runs shortRunScript on the built-in simulator with
// extra flags, recording its dashboard, and returns the recording.
func recordShortRun(t *testing.T, extra ...string) string {
	t.Helper()
	recording := filepath.Join(t.TempDir(), "short.dash.gz")
	args := append([]string{"run", "--no-preflight", "--no-color", "-q", "--dashboard-record", recording, "--dashboard-period=100ms"}, extra...)
	code, stdout, stderr := cli(t, context.Background(), nil, append(args, writeScript(t, "short.js", shortRunScript))...)
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return recording
}

// finalState is what a dashboard page shows of the run's end: its status
// line and its progress table, as text.
func finalState(t *testing.T, dom string) (status, progress string) {
	t.Helper()
	s := regexp.MustCompile(`<span id="status"[^>]*>(.*?)</span>`).FindStringSubmatch(dom)
	p := regexp.MustCompile(`(?s)<table id="progress">(.*?)</table>`).FindStringSubmatch(dom)
	if s == nil || p == nil {
		t.Fatalf("the page has no status line or progress table:\n%s", dom)
	}
	text := regexp.MustCompile(`<[^>]*>`)
	return html.UnescapeString(s[1]), strings.Join(strings.Fields(html.UnescapeString(text.ReplaceAllString(p[1], " "))), " ")
}

// tabSeen is what a tab of the page draws once clicked.
type tabSeen struct {
	Tab    string `json:"tab"`
	Charts int    `json:"charts"`
	Lines  int    `json:"lines"`
}

// clickEveryTab opens a copy of the page file in Chromium with a script
// that clicks each of its tabs in turn and counts the charts and the
// lines drawn in them.
func clickEveryTab(t *testing.T, bin, page string) []tabSeen {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	const script = `<script>(function () {
  const seen = [];
  const n = document.querySelectorAll("#tabs button").length;
  for (let i = 0; i < n; i++) {
    const tab = document.querySelectorAll("#tabs button")[i];
    tab.click();
    seen.push({tab: tab.textContent, charts: document.querySelectorAll("#view .chart").length, lines: document.querySelectorAll("#view .chart path").length});
  }
  const pre = document.createElement("pre");
  pre.id = "tabs-seen";
  pre.textContent = JSON.stringify(seen);
  document.body.appendChild(pre);
})();</script>`
	end := strings.LastIndex(string(b), "</body>")
	clicked := filepath.Join(t.TempDir(), "clicked.html")
	if err := os.WriteFile(clicked, []byte(string(b[:end])+script+string(b[end:])), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(browsertest.Run(t, bin, clicked, "--dump-dom"))
	m := regexp.MustCompile(`<pre id="tabs-seen">(.*?)</pre>`).FindStringSubmatch(dom)
	var seen []tabSeen
	if m == nil || json.Unmarshal([]byte(html.UnescapeString(m[1])), &seen) != nil {
		t.Fatalf("the tabs were not clicked:\n%s", dom)
	}
	return seen
}

// keepScreenshot copies shot to the temp dir's root when
// LLMRUN_KEEP_SCREENSHOTS is set, to be looked at.
func keepScreenshot(shot string) {
	if os.Getenv("LLMRUN_KEEP_SCREENSHOTS") == "" {
		return
	}
	if b, err := os.ReadFile(shot); err == nil {
		os.WriteFile(filepath.Join(os.TempDir(), filepath.Base(shot)), b, 0o644)
	}
}

// llmrun dashboard report writes a recorded run as one HTML file that
// Chromium opens from file:// with no console error (no stream is
// opened), each tab drawing its charts, and whose final state is what
// llmrun dashboard replay --speed 0 serves: the same status line and
// progress table. The screenshots of both are kept with
// LLMRUN_KEEP_SCREENSHOTS, to be looked at.
func TestDashboardReportOfARecordingMatchesItsReplayInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	recording := recordShortRun(t)
	code, stdout, stderr := command(t, "dashboard", "report", recording)
	want := strings.TrimSuffix(recording, ".gz") + ".html"
	if code != exitcode.OK || stdout != "wrote "+want+"\n" || stderr != "" {
		t.Fatalf("dashboard report: exit %d\n%s\n%s\nwant 0 saying wrote %s", code, stdout, stderr, want)
	}
	page, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, remote := range []string{"http://", "https://", "//cdn"} {
		if strings.Contains(string(page), "src=\""+remote) || strings.Contains(string(page), "href=\""+remote) {
			t.Errorf("the report loads something from %s: it must work offline", remote)
		}
	}
	reportDOM := string(browsertest.Run(t, bin, want, "--dump-dom"))
	reportStatus, reportProgress := finalState(t, reportDOM)
	if !strings.HasPrefix(reportStatus, "run over · ") || !strings.Contains(reportProgress, "default done") {
		t.Errorf("the report's final state is %q, %q: want the run over, its scenario done", reportStatus, reportProgress)
	}
	seen := clickEveryTab(t, bin, want)
	tabs := map[string]bool{}
	for _, s := range seen {
		tabs[s.Tab] = true
		if s.Charts == 0 || s.Lines == 0 {
			t.Errorf("tab %q draws %d charts with %d lines", s.Tab, s.Charts, s.Lines)
		}
	}
	if !tabs["all"] || !tabs["default"] || !tabs["server"] {
		t.Errorf("the report's tabs are %v, want all, default and server (the simulator's metrics)", seen)
	}
	reportShot := filepath.Join(t.TempDir(), "dash-report.png")
	browsertest.Screenshot(t, bin, want, reportShot, 1280, 900)
	keepScreenshot(reportShot)

	url, stop := replay(t, recording)
	defer stop()
	replayStatus, replayProgress := finalState(t, string(browsertest.Run(t, bin, url, "--dump-dom")))
	if reportStatus != replayStatus || reportProgress != replayProgress {
		t.Errorf("the report shows\n  %q\n  %q\nthe replay\n  %q\n  %q", reportStatus, reportProgress, replayStatus, replayProgress)
	}
	replayShot := filepath.Join(t.TempDir(), "dash-report-replay.png")
	browsertest.Screenshot(t, bin, url, replayShot, 1280, 900)
	keepScreenshot(replayShot)
}

func TestDashboardReportRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.dash.gz")
	notGzip := filepath.Join(dir, "plain.dash.gz")
	if err := os.WriteFile(notGzip, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report"}, exitcode.Usage, "want: llmrun dashboard replay FILE, or llmrun dashboard report FILE"},
		{[]string{"report", missing, "--speed", "2"}, exitcode.Usage, "--addr and --speed are replay's"},
		{[]string{"replay", missing, "-o", "x.html"}, exitcode.Usage, "-o is report's"},
		{[]string{"report", missing, "-o", ""}, exitcode.Usage, "-o: want a file name"},
		{[]string{"report", missing}, exitcode.Error, missing},
		{[]string{"report", notGzip}, exitcode.Error, notGzip + ": not a gzip-compressed dashboard recording"},
		{[]string{"report", notGzip, "-o", notGzip}, exitcode.Error, "-o " + notGzip + ": that is the recording itself"},
	} {
		code, _, stderr := command(t, "dashboard", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("dashboard %v: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if b, err := os.ReadFile(notGzip); err != nil || string(b) != "hello\n" {
		t.Errorf("the recording named as -o was changed: %q, %v", b, err)
	}
}

// A recording whose end is missing (its run killed) is still reported,
// up to the cut, with a warning naming the file.
func TestDashboardReportOfARecordingCutShort(t *testing.T) {
	recording := recordShortRun(t)
	b, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.dash.gz")
	if err := os.WriteFile(cut, b[:len(b)*3/4], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cut.html")
	code, stdout, stderr := command(t, "dashboard", "report", cut, "-o", out)
	if code != exitcode.OK || !strings.Contains(stderr, "llmrun dashboard report: warning: "+cut) || !strings.Contains(stderr, "updates before the cut") {
		t.Fatalf("exit %d\n%s\n%s\nwant 0 with a warning naming %s", code, stdout, stderr, cut)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), "was cut short after") {
		t.Errorf("the report of a recording cut short does not say so (%v)", err)
	}
}

// llmrun run --dashboard-export on a run stopped by SIGINT still writes
// the report, and it says the run was interrupted; Chromium shows it so,
// in the note above the charts, the status line and the scenario's row.
func TestDashboardExportOfARunStoppedBySIGINT(t *testing.T) {
	t.Parallel()
	bin := llmrunBinary(t)
	script := writeScript(t, "long.js", `
import llm from 'llm';
export const options = { vus: 2, duration: '10m' };
export default function () {
  console.log('iteration running');
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 16 });
}
`)
	export := filepath.Join(t.TempDir(), "stopped.html")
	r := runAndSignal(t, bin, syscall.SIGINT, "iteration running", false, "run", "--no-color", "-q", "--dashboard-export", export, "--dashboard-period=100ms", script)
	if r.code != exitcode.Interrupted {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", r.code, exitcode.Interrupted, r.stderr)
	}
	page, err := os.ReadFile(export)
	if err != nil {
		t.Fatalf("--dashboard-export not written after SIGINT: %v\n%s", err, r.stderr)
	}
	const said = "The run was interrupted (Ctrl-C or a signal) before its end"
	if !strings.Contains(string(page), said) {
		t.Errorf("the report of an interrupted run does not say %q", said)
	}
	chromium := browsertest.Chromium(t)
	dom := string(browsertest.Run(t, chromium, export, "--dump-dom"))
	if !regexp.MustCompile(`<div id="dropped" style="display: block;">` + regexp.QuoteMeta(said)).MatchString(dom) {
		t.Errorf("the page does not show that the run was interrupted:\n%s", dom)
	}
	status, progress := finalState(t, dom)
	if !strings.HasPrefix(status, "run over: interrupted (Ctrl-C or a signal) · ") {
		t.Errorf("the interrupted run's report ends with the status %q, which does not say it was interrupted", status)
	}
	if !regexp.MustCompile(`default interrupted \d+ %`).MatchString(progress) {
		t.Errorf("the interrupted run's report shows its scenario as %q, not interrupted where it stopped", progress)
	}
}

// $LLMRUN_DASHBOARD_EXPORT writes the report of a run whose script
// fails in setup(), and the report says the run ended on an error.
func TestDashboardExportFromTheEnvironmentOfAFailedScript(t *testing.T) {
	script := writeScript(t, "fails.js", "export function setup() { throw new Error('no setup'); }\nexport default function () {}\n")
	export := filepath.Join(t.TempDir(), "failed.html")
	code, stdout, stderr := cli(t, context.Background(), map[string]string{"LLMRUN_DASHBOARD_EXPORT": export}, "run", "--no-preflight", "--no-color", "-q", script)
	if code != exitcode.ScriptError {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.ScriptError, stdout, stderr)
	}
	page, err := os.ReadFile(export)
	if err != nil {
		t.Fatalf("$LLMRUN_DASHBOARD_EXPORT not written: %v\n%s", err, stderr)
	}
	if !strings.Contains(string(page), "The run ended on an error of its script") {
		t.Error("the report of a run whose script failed does not say so")
	}
}
