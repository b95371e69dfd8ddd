package health

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
)

// node makes a pointer-heavy live heap, which every collection marks.
type node struct {
	next  *node
	value []byte
}

// A probe counts the collections forced between its Start and Stop, and
// their stop-the-world pauses, with the collector's share of the CPU in
// range.
func TestProbeCountsForcedCollections(t *testing.T) {
	const forced = 20
	p := Start()
	if !p.gcOK {
		t.Skip("this Go runtime does not report the collector's metrics")
	}
	var head *node
	for i := range 100_000 {
		head = &node{next: head, value: make([]byte, 1+i%64)}
	}
	for range forced {
		runtime.GC()
	}
	runtime.KeepAlive(head)
	g := p.Stop().GC
	if g.Cycles < forced {
		t.Errorf("%d cycles counted, want at least the %d forced", g.Cycles, forced)
	}
	if g.PauseMax <= 0 || g.PauseP99 <= 0 || g.PauseP99 > g.PauseMax {
		t.Errorf("pauses p99 %g max %g ms, want positive with p99 ≤ max", g.PauseP99, g.PauseMax)
	}
	if g.Share < 0 || g.Share > 1 {
		t.Errorf("share %g, want 0–1", g.Share)
	}
}

func TestMeasureGCFromReadings(t *testing.T) {
	buckets := []float64{0, 0.0001, 0.001, 0.010}
	start := gcReading{cycles: 3, gcCPU: 1, busy: 10, pauses: newHist(buckets, 4, 0, 0)}
	end := gcReading{cycles: 13, gcCPU: 1.5, busy: 12, pauses: newHist(buckets, 4+18, 1, 1)}
	g := measureGC(start, end)
	// 20 new pauses: 18 under 0.1 ms, one under 1 ms, one under 10 ms.
	want := GC{Cycles: 10, Share: 0.25, PauseP99: 10, PauseMax: 10}
	if g != want {
		t.Errorf("measureGC = %+v, want %+v", g, want)
	}
}

func newHist(buckets []float64, counts ...uint64) *metrics.Float64Histogram {
	return &metrics.Float64Histogram{Counts: counts, Buckets: buckets}
}

// The collector is named, with what to do, when goroutines (or its own
// pauses) waited long while it took at least MaxGCShare of llmrun's CPU;
// whatever llmrun's CPU was, unless other processes took the CPU from a
// client using little of its own. It is not named below that share, nor
// without a long wait.
func TestJudgeNamesGarbageCollection(t *testing.T) {
	heavy := GC{Cycles: 8, Share: 0.14, PauseP99: 0.6, PauseMax: 0.6}
	tests := []struct {
		name   string
		r      Report
		gc     bool
		nWarn  int
		reason string // in the cause when gc
	}{
		{name: "the issue's run: a long delay at 39 % CPU", r: Report{CPU: 0.39, Procs: 1, SchedDelayP99: 14.7, GC: heavy}, gc: true, nWarn: 1,
			reason: "llmrun's own load: its garbage collection (garbage collection 14 % of llmrun's CPU in 8 cycles, pauses p99 0.60 ms (max 0.60 ms); goroutines waited 14.7 ms (p99) for a CPU)"},
		{name: "a long pause alone", r: Report{CPU: 0.3, Procs: 1, SchedDelayP99: 1, GC: GC{Cycles: 2, Share: 0.2, PauseP99: 8, PauseMax: 8}}, gc: true, nWarn: 1,
			reason: "llmrun's own load: its garbage collection (garbage collection 20 % of llmrun's CPU in 2 cycles, pauses p99 8.00 ms (max 8.00 ms); the collector paused llmrun up to 8.00 ms)"},
		{name: "other processes took the CPU from a client using little", r: Report{CPU: 0.08, Procs: 2, SchedDelayP99: 40, GC: GC{Cycles: 2, Share: 0.3, PauseMax: 470},
			Machine: &Machine{CPUs: 2, Others: 0.92}}, nWarn: 1},
		{name: "busy CPU too", r: Report{CPU: 0.9, Procs: 1, SchedDelayP99: 30, GC: heavy}, gc: true, nWarn: 2},
		{name: "little collection", r: Report{CPU: 0.39, Procs: 1, SchedDelayP99: 14.7, GC: GC{Cycles: 8, Share: MaxGCShare / 2}}, nWarn: 1},
		{name: "no long wait", r: Report{CPU: 0.39, Procs: 1, SchedDelayP99: 2, GC: heavy}},
	}
	for _, tc := range tests {
		r := tc.r
		r.judge()
		named := strings.Contains(r.Cause, "garbage collection")
		if named != tc.gc || tc.gc && !strings.HasPrefix(r.Cause, tc.reason) {
			t.Errorf("%s: cause %q, want garbage collection named: %v (%q)", tc.name, r.Cause, tc.gc, tc.reason)
		}
		if len(r.Warnings) != tc.nWarn {
			t.Errorf("%s: warnings %q, want %d", tc.name, r.Warnings, tc.nWarn)
			continue
		}
		last := ""
		if len(r.Warnings) > 0 {
			last = r.Warnings[len(r.Warnings)-1]
		}
		if tc.gc && (!strings.Contains(last, "garbage collector took") || !strings.Contains(last, "GOGC") || !strings.Contains(last, "GOMEMLIMIT")) {
			t.Errorf("%s: warning %q, want it to name the collector and say what to do", tc.name, last)
		}
		if !tc.gc && strings.Contains(last, "garbage collector") {
			t.Errorf("%s: warning %q names the collector", tc.name, last)
		}
	}
}

// What a warning that found no cause checked includes the collector's
// figures once it ran.
func TestCheckedListsGarbageCollection(t *testing.T) {
	r := Report{CPU: 0.2, Procs: 2, SchedDelayP99: 1, GC: GC{Cycles: 3, Share: 0.02, PauseP99: 0.1, PauseMax: 0.2}}
	if got := r.Checked(); !strings.HasSuffix(got, ", garbage collection 2 % of llmrun's CPU in 3 cycles, pauses p99 0.10 ms (max 0.20 ms)") {
		t.Errorf("Checked() = %q", got)
	}
}

// The remedy starts from the GOGC in force, which llmrun's own heap goal
// may have set above 400: a smaller GOGC would give the collector less
// room, not more.
func TestGCRemedyStartsFromTheGOGCInForce(t *testing.T) {
	tests := []struct {
		percent int
		want    string
	}{
		{0, "give the collector more room with GOGC (e.g. GOGC=400) and cap the memory with GOMEMLIMIT"},
		{100, "a GOGC above the 100 in force (e.g. GOGC=400;"},
		{853, "a GOGC above the 853 in force (e.g. GOGC=3412; a GOGC you set replaces llmrun's own heap goal)"},
	}
	for _, tc := range tests {
		if got := (GC{Percent: tc.percent}).remedy(); !strings.Contains(got, tc.want) {
			t.Errorf("GOGC %d: remedy %q, want it to contain %q", tc.percent, got, tc.want)
		}
	}
}

// A live reading has the GOGC in force, and measureGC keeps the later one.
func TestMeasureGCReadsTheGOGCInForce(t *testing.T) {
	start, ok := readGC()
	if !ok {
		t.Fatal("readGC: this Go runtime lacks a collector counter")
	}
	prev := debug.SetGCPercent(853)
	defer debug.SetGCPercent(prev)
	end, _ := readGC()
	if g := measureGC(start, end); g.Percent != 853 {
		t.Errorf("Percent %d, want 853", g.Percent)
	}
}
