package runner_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
	"github.com/llmrun/llmrun/runtime/runner"
)

// A run with --dashboard-record and no --dashboard records every event to
// the file, the last one marked done with the run's requests, and serves
// no page.
func TestDashboardRecordWithoutDashboardRecordsTheRun(t *testing.T) {
	const threeChats = `
import llm from 'llm';
export const options = { iterations: 3 };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4 });
}
`
	path := filepath.Join(t.TempDir(), "run.dash.gz")
	var stdout, stderr strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	o := runner.Run(ctx, runner.Config{
		Engine:      engine.Config{ScriptPath: "three.js", Source: []byte(threeChats), Seed: 1},
		NoPreflight: true, Stdout: &stdout, Stderr: &stderr, Version: "test",
		Dashboard: &dashboard.Config{Period: time.Hour, Record: path},
	})
	if o.Verdict != runner.Passed {
		t.Fatalf("verdict %v:\n%s\n%s", o.Verdict, &stdout, &stderr)
	}
	if regexp.MustCompile(`output: +dashboard http`).MatchString(stdout.String()) {
		t.Errorf("a run that only records served a dashboard:\n%s", &stdout)
	}
	if !strings.Contains(stdout.String(), "dashboard recording "+path) {
		t.Errorf("the banner does not name the recording %s:\n%s", path, &stdout)
	}
	events, err := dashboard.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		t.Fatal("the recording holds no event")
	}
	last := events[len(events)-1]
	if !last.Done || last.All.Requests != 3 {
		t.Errorf("the recording's last event is done=%v with %d requests, want done with the run's 3", last.Done, last.All.Requests)
	}
}

// A run stopped by its context (as by Ctrl-C) still closes a readable
// recording, its last event marked done.
func TestDashboardRecordOfAStoppedRunIsReadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.dash.gz")
	stdout := newWatched(`output: +dashboard recording`)
	var stderr strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ended := make(chan runner.Outcome, 1)
	go func() {
		ended <- runner.Run(ctx, runner.Config{
			Engine:      engine.Config{ScriptPath: "chat.js", Source: []byte(chatScript), Seed: 1},
			NoPreflight: true, Stdout: stdout, Stderr: &stderr, Version: "test",
			Dashboard: &dashboard.Config{Period: 50 * time.Millisecond, Record: path},
		})
	}()
	select {
	case <-stdout.seen:
	case o := <-ended:
		t.Fatalf("the run ended (%v) before its banner:\n%s\n%s", o.Verdict, stdout, &stderr)
	}
	cancel()
	<-ended
	events, err := dashboard.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || !events[len(events)-1].Done {
		t.Errorf("the stopped run's recording holds %d events, the last not marked done", len(events))
	}
}

func TestDashboardRecordToAFileThatCannotBeCreatedStopsTheRunBeforeItStarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "run.dash.gz")
	var stdout, stderr strings.Builder
	o := runner.Run(t.Context(), runner.Config{
		Engine:      engine.Config{ScriptPath: "chat.js", Source: []byte(chatScript), Seed: 1},
		NoPreflight: true, Stdout: &stdout, Stderr: &stderr, Version: "test",
		Dashboard: &dashboard.Config{Period: time.Second, Record: path},
	})
	if o.Verdict != runner.Errored {
		t.Errorf("verdict %v, want errored", o.Verdict)
	}
	if !strings.Contains(stderr.String(), path) {
		t.Errorf("stderr %q does not name %s", stderr.String(), path)
	}
	if stdout.Len() != 0 {
		t.Errorf("the run started (its banner was printed):\n%s", stdout.String())
	}
}
