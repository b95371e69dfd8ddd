package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestPercent(t *testing.T) {
	tests := []struct {
		live uint64
		want int
	}{
		{0, 6_400},       // before the first cycle: counted as 4 MiB, a first goal of 256 MiB
		{1 << 20, 6_400}, // below 4 MiB: the same
		{4 << 20, 6_400}, // 4 MiB + 256 MiB
		{64 << 20, 400},  // the heap: about GOGC=400
		{128 << 20, 200}, // 128 MiB + 256 MiB: a heap of maxGoal, 384 MiB
		{192 << 20, 100}, // 192 MiB + 192 MiB: the same
		{256 << 20, 50},  // 256 MiB + 128 MiB: the same
		{300 << 20, 28},  // 300 MiB + 84 MiB: the same
		{308 << 20, 25},  // from 0.8 × maxGoal, a quarter of the live heap
		{maxGoal, 25},    // and beyond
		{4 << 30, 25},    // large heaps keep it
	}
	for _, tc := range tests {
		if got := Percent(tc.live); got != tc.want {
			t.Errorf("Percent(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

// gogc is the GOGC in force.
func gogc(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// The user's GOGC wins: nothing is tuned.
func TestUserGOGCIsKept(t *testing.T) {
	before := gogc(t)
	if tuner := Start(env(map[string]string{"GOGC": "50"})); tuner != nil {
		tuner.Stop()
		t.Fatal("Start tuned the collector although GOGC was set")
	}
	if after := gogc(t); after != before {
		t.Errorf("GOGC %d after Start, want %d kept", after, before)
	}
}

// Without GOGC, Start sets the percent for the live heap at once, every
// cycle sets it again for the heap that cycle left, and Stop restores the
// one it found.
func TestTunerFollowsTheLiveHeap(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	tuned := make(chan int, 64)
	tuner := start(env(nil), tuned)
	if got := gogc(t); got < 100 {
		t.Errorf("GOGC %d after Start, want at least 100", got)
	}
	live := make([][]byte, 0, 96)
	for range cap(live) {
		live = append(live, make([]byte, 1<<20))
	}
	runtime.GC()
	// Cycles before this one, if any, left less live.
	got := <-tuned
	for got > Percent(90<<20) {
		got = <-tuned
	}
	runtime.KeepAlive(live)
	if got < Percent(200<<20) {
		t.Errorf("GOGC %d after a cycle that left about 96 MiB live, want about %d", got, Percent(96<<20))
	}
	if now := gogc(t); now != got {
		t.Errorf("GOGC in force %d, want the tuned %d", now, got)
	}
	tuner.Stop()
	if now := gogc(t); now != 100 {
		t.Errorf("GOGC %d after Stop, want the 100 Start found", now)
	}
}
