package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
)

func TestBearsToken(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`data: {"choices":[{"delta":{"role":"assistant","content":""}}]}` + "\n", false},
		{`data: {"choices":[{"delta":{"content":"world"}}]}` + "\n", true},
		{`data: {"choices":[{"delta":{},"finish_reason":"length"}]}` + "\n", false},
		{`data: {"choices":[],"usage":{"completion_tokens":5}}` + "\n", false},
		{`data: {"content":"`, false},
	} {
		if got := bearsToken([]byte(tc.line)); got != tc.want {
			t.Errorf("bearsToken(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestFloorAgainstTheSimulator runs the floor's closed loop against the
// built-in simulator: every request completes with all its tokens timed.
func TestFloorAgainstTheSimulator(t *testing.T) {
	cfg := llmsimtest.Fast()
	sim := llmsimtest.Start(t, cfg)

	const streams, requests, tokens = 4, 10, 5
	res := runFloor(context.Background(), floorLoad{URL: sim.URL(), Model: cfg.Model, Streams: streams, Requests: requests, Tokens: tokens, Timeout: time.Minute})
	if res.Completed != requests || res.Failed != 0 {
		t.Fatalf("completed %d, failed %d (%s), want %d and 0", res.Completed, res.Failed, res.FirstError, requests)
	}
	if st := sim.Server().Stats(); st.Tokens != requests*tokens || st.Received != requests {
		t.Errorf("simulator: %d requests, %d tokens, want %d and %d", st.Received, st.Tokens, requests, requests*tokens)
	}
	if res.TTFTMean <= 0 || res.TTFTP99 < res.TTFTMean || res.ITLP99 <= 0 {
		t.Errorf("timings TTFT mean %.3f p99 %.3f ms, ITL p99 %.3f ms: want positive, p99 ≥ mean", res.TTFTMean, res.TTFTP99, res.ITLP99)
	}
}

func TestPositiveList(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"", nil, false},
		{"1000", []int{1000}, false},
		{"1000, 2000", []int{1000, 2000}, false},
		{"1000,0", nil, true},
		{"x", nil, true},
	} {
		got, err := positiveList(tc.in, "arrival rate")
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("positiveList(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestPaceVerdict: a rate's verdict holds its median lag p99 and every
// run's drops against the targets.
func TestPaceVerdict(t *testing.T) {
	for _, tc := range []struct {
		row  paceRow
		want string
	}{
		{paceRow{1000, []pacing{{lagP99: 1.2}, {lagP99: 9}, {lagP99: 1.9}}}, "lag p99 1.90 ms (target ≤ 2 ms), 0 dropped (target 0): met"},
		{paceRow{1000, []pacing{{lagP99: 1.2}, {lagP99: 1.5, dropped: 3}, {lagP99: 1.8}}}, "lag p99 1.50 ms (target ≤ 2 ms), 3 dropped (target 0): MISSED"},
		{paceRow{2000, []pacing{{lagP99: 4, dropped: 50}}}, "lag p99 4.00 ms (target ≤ 5 ms), 50 dropped: met"},
		{paceRow{2000, []pacing{{lagP99: 6}}}, "lag p99 6.00 ms (target ≤ 5 ms), 0 dropped: MISSED"},
		{paceRow{300, []pacing{{lagP99: 0.5}}}, "lag p99 0.50 ms, 0 dropped (no target at this rate)"},
	} {
		if got := tc.row.verdict(); got != tc.want {
			t.Errorf("verdict(%d/s) = %q, want %q", tc.row.rate, got, tc.want)
		}
	}
}

func TestRSSText(t *testing.T) {
	for _, tc := range []struct {
		rss, floor float64
		want       string
	}{
		{52, 20, "52 MB (2.6×)"},
		{20, 0, "20 MB"},
		{52, -1, "52 MB"},
		{0, 20, "?"},
	} {
		if got := rssText(tc.rss, tc.floor); got != tc.want {
			t.Errorf("rssText(%v, %v) = %q, want %q", tc.rss, tc.floor, got, tc.want)
		}
	}
}
