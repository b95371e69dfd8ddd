package main

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/ptytest"
)

// On a terminal the live view is a block redrawn in place: a heading, a
// row per scenario with its phase and progress bar, cut to the
// terminal's width; a finished scenario's row stays while the next runs;
// a line the script logs comes out whole, above the block; the block is
// erased before the summary.
func TestLiveViewOnATerminal(t *testing.T) {
	t.Parallel()
	const cols = 100
	tty, master := ptytest.Open(t, cols)
	var screen bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		// Reading the master fails (EIO) once the terminal is closed
		// on both sides.
		_, err := io.Copy(&screen, master)
		copied <- err
	}()
	stdout, _ := tempOutput(t, "stdout")
	code := runLive(t, stdout, tty, "run", writeLiveScript(t))
	tty.Close()
	<-copied
	out := screen.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// Each drawing but the first begins by erasing the last: cursor up to
	// its first line, clear to the end of the screen.
	erase := regexp.MustCompile(`\r(\x1b\[\d+A)?\x1b\[J`)
	draws := erase.Split(out, -1)
	if len(draws) < 4 {
		t.Fatalf("the block was drawn %d times, want several (every 500 ms of a 4 s run):\n%q", len(draws), out)
	}
	var finishedWhileNextRuns, logged bool
	for _, d := range draws {
		d = strings.ReplaceAll(d, "\r\n", "\n")
		lines := strings.Split(d, "\n")
		for _, line := range lines {
			if n := len([]rune(line)); n >= cols {
				t.Errorf("a line of %d columns on a %d-column terminal wraps: %q", n, cols, line)
			}
		}
		if regexp.MustCompile(`^level=INFO msg=marker-line vu=\d+\nrunning `).MatchString(d) {
			logged = true
		}
		if regexp.MustCompile(`(?m)^a +done +█+ 100%`).MatchString(d) && regexp.MustCompile(`(?m)^b +running +[█░]+ +\d+% ETA`).MatchString(d) {
			finishedWhileNextRuns = true
		}
	}
	if !strings.Contains(out, "scenario  phase") || !regexp.MustCompile(`(?m)^running +\d`).MatchString(strings.ReplaceAll(out, "\r", "\n")) {
		t.Errorf("no heading or table header in the view:\n%q", out)
	}
	if !finishedWhileNextRuns {
		t.Errorf("no drawing shows a done and b running with its bar, percent and ETA:\n%q", out)
	}
	if !logged {
		t.Errorf("the script's log line does not come out whole after an erase:\n%q", out)
	}
	// After the last erase nothing of the view is left: the run's last
	// words on stderr, if any, are not the block.
	if last := draws[len(draws)-1]; strings.Contains(last, "scenario  phase") {
		t.Errorf("the block is left on the terminal after the run:\n%q", last)
	}
}

// On a terminal, a run against the built-in simulator, whose /metrics it
// reads with no flag, shows the server's line in the block under the
// scenarios' table (the GPU's after it, where it is read), from the last
// read: its running requests no more than the VUs.
func TestLiveViewOnATerminalShowsTheServer(t *testing.T) {
	t.Parallel()
	tty, master := ptytest.Open(t, 120)
	var screen bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(&screen, master)
		copied <- err
	}()
	stdout, _ := tempOutput(t, "stdout")
	script := writeScript(t, "two.js", `import llm from 'llm';
export const options = { vus: 2, duration: '2s' };
export default function () { llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 }); }
`)
	code := runLive(t, stdout, tty, "run", script)
	tty.Close()
	<-copied
	out := strings.ReplaceAll(screen.String(), "\r\n", "\n")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	line := regexp.MustCompile(`(?m)^default +running .*\nserver vLLM 127\.0\.0\.1:\d+: running (\d+), waiting \d+, KV \d+ %, preemptions \+0\n(?:gpu .*\n)*figures of the last`)
	m := line.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no drawing has the server's line between the table and its note:\n%q", out)
	}
	if running, _ := strconv.Atoi(m[1]); running > 2 {
		t.Errorf("the server runs %d requests, more than the 2 VUs send", running)
	}
}
