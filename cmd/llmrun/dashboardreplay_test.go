package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
)

// A run recorded with --dashboard-record and replayed with llmrun
// dashboard replay shows in headless Chromium, with no console error, the
// recorded run's end: "run over" and its scenario's iterations.
func TestDashboardReplayOfARecordedRunInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	script := writeScript(t, "five.js", "import llm from 'llm';\nexport const options = { iterations: 5 };\n"+
		"export default function () { llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4 }); }\n")
	recording := filepath.Join(t.TempDir(), "five.dash.gz")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-preflight", "--no-color",
		"--dashboard-record", recording, "--dashboard-period=50ms", script)
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	events, err := dashboard.ReadRecording(recording)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if !last.Done || len(last.Scenarios) != 1 || last.Scenarios[0].Iterations != 5 {
		t.Fatalf("the recording's last event is not the run's end with its 5 iterations: %+v", last)
	}

	url, stop := replay(t, recording)
	defer stop()
	dom := string(browsertest.Run(t, bin, url, "--dump-dom"))
	if !strings.Contains(dom, "run over") {
		t.Errorf("the replayed page does not say the run is over:\n%s", dom)
	}
	if want := fmt.Sprintf("<td>%d</td>", last.Scenarios[0].Iterations); !strings.Contains(dom, want) {
		t.Errorf("the replayed page does not show the recorded %s iterations:\n%s", want, dom)
	}
	// To be looked at: copied to /tmp when LLMRUN_KEEP_SCREENSHOTS is set.
	shot := filepath.Join(t.TempDir(), "dash-replay.png")
	browsertest.Screenshot(t, bin, url, shot, 1280, 900)
	keepScreenshot(shot)
}

// replay serves recording with llmrun dashboard replay --speed 0 and
// returns its address, and a function that stops it and checks it ended
// well.
func replay(t *testing.T, recording string) (url string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	out, outWriter := io.Pipe()
	var replayErr strings.Builder
	ended := make(chan int, 1)
	go func() {
		ended <- dashboardCommand(ctx, []string{"replay", recording, "--addr", "127.0.0.1:0", "--speed", "0"}, outWriter, &replayErr)
		outWriter.Close()
	}()
	first, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("replay printed no line: %v\n%s", err, &replayErr)
	}
	go io.Copy(io.Discard, out)
	m := regexp.MustCompile(`at (http://\S+/);`).FindStringSubmatch(first)
	if m == nil {
		cancel()
		t.Fatalf("replay's first line names no address: %q", first)
	}
	return m[1], func() {
		cancel()
		if code := <-ended; code != exitcode.OK {
			t.Errorf("replay: exit %d after Ctrl-C, want 0\n%s", code, &replayErr)
		}
	}
}

func TestDashboardReplayRefusesBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.dash.gz")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay"}, exitcode.Usage, "want: llmrun dashboard replay FILE"},
		{[]string{"play", missing}, exitcode.Usage, "want: llmrun dashboard replay FILE"},
		{[]string{"replay", missing, "--speed", "-1"}, exitcode.Usage, "--speed must not be negative"},
		{[]string{"replay", missing}, exitcode.Error, missing},
	} {
		code, _, stderr := command(t, "dashboard", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("dashboard %v: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}
