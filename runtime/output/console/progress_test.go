package console_test

import (
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output/console"
)

// The live view's heading line: its output tok/s is that of the last few
// seconds of readings: it rises and falls with the tokens as they arrive,
// and drops to 0 when they stop, however many arrived before.
func TestProgressMeter(t *testing.T) {
	s := func(secs float64) time.Duration { return time.Duration(secs * float64(time.Second)) }
	tests := []struct {
		name string
		p    engine.Progress
		want string
	}{
		{"before the start", engine.Progress{MaxVUs: 4},
			"running      0s  VUs 0/4  requests 0  failed 0  output 0 tok/s"},
		{"early: since the start", engine.Progress{Elapsed: s(2.25), ActiveVUs: 3, MaxVUs: 8, Requests: 42, Failed: 1, OutputTokens: 450},
			"running    2.2s  VUs 3/8  requests 42  failed 1  output 200 tok/s"},
		{"still since the start", engine.Progress{Elapsed: s(3), ActiveVUs: 3, MaxVUs: 8, Requests: 42, Failed: 1, OutputTokens: 600},
			"running      3s  VUs 3/8  requests 42  failed 1  output 200 tok/s"},
		{"the reading 3 s back or just before: 2.25 s", engine.Progress{Elapsed: s(5.5), ActiveVUs: 3, MaxVUs: 8, Requests: 50, Failed: 1, OutputTokens: 1750},
			"running    5.5s  VUs 3/8  requests 50  failed 1  output 400 tok/s"},
		{"no request ended, tokens arrived", engine.Progress{Elapsed: s(6), ActiveVUs: 3, MaxVUs: 8, Requests: 50, Failed: 1, OutputTokens: 2400},
			"running      6s  VUs 3/8  requests 50  failed 1  output 600 tok/s"},
		{"tokens stopped 3 s ago", engine.Progress{Elapsed: s(9), ActiveVUs: 0, MaxVUs: 8, Requests: 60, Failed: 1, OutputTokens: 2400},
			"running      9s  VUs 0/8  requests 60  failed 1  output 0 tok/s"},
		{"long after", engine.Progress{Elapsed: 90 * time.Second, ActiveVUs: 16, MaxVUs: 16, Requests: 1000, OutputTokens: 12400},
			"running   1m30s  VUs 16/16  requests 1000  failed 0  output 123.5 tok/s"},
	}
	var m console.ProgressMeter
	for _, tc := range tests {
		if got := m.Line(tc.p); got != tc.want {
			t.Errorf("%s: Line(%+v)\n got %q\nwant %q", tc.name, tc.p, got, tc.want)
		}
	}
}
