// Package gctune sizes the Go garbage collector's heap goal for a load
// generator. With the runtime's default (GOGC=100) a heap of a few tens of
// MB, hundreds of goja runtimes and the requests in flight, is collected
// about once a second at 1,000 requests/s; on one busy core each mark
// phase, tens to hundreds of milliseconds long, delays the goroutines that
// start arrivals and read responses. The tuner leaves Headroom of new
// allocation between collections while the heap stays within maxGoal,
// and a quarter of the live heap (GOGC=25) beyond: the goal after each
// cycle is the larger of min(live + Headroom, maxGoal) and 1.25 × live,
// and Headroom before the first. A large heap is mostly VUs and streams
// in flight (10,000 of them hold some 350 MB), little of it garbage:
// memory is what a run of that many streams is short of, and its
// collections are rare (its requests are long), so more of them cost
// little; the runtime's default would let it double.
// It changes nothing the user set: with GOGC in the environment the
// runtime keeps it, and GOMEMLIMIT still caps the heap either way.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Headroom is the least the heap may grow between two collections.
const Headroom = 256 << 20

// maxGoal is the most a heap may grow to while a quarter of its live heap
// is less: a live heap between maxGoal − Headroom and 0.8 × maxGoal gets
// less than Headroom of room.
const maxGoal = Headroom + Headroom/2

// largePercent is the least GOGC: a live heap of 0.8 × maxGoal or more
// may grow by a quarter.
const largePercent = 25

// liveHeap is the runtime/metrics name of the heap the last cycle marked.
const liveHeap = "/gc/heap/live:bytes"

// minLive is the least live heap Percent reckons with: the runtime's
// heap minimum at GOGC=100 (4 MiB), which it scales by GOGC/100 into the
// least goal of any cycle, the first included. Counting a smaller heap
// (0 before the first cycle) as minLive bounds the GOGC to 6,400 and that
// least goal to Headroom.
const minLive = 4 << 20

// Percent is the GOGC that gives a live heap of live bytes a goal of
// max(min(live + Headroom, maxGoal), 1.25 × live). A heap below minLive
// counts as minLive.
func Percent(live uint64) int {
	live = max(live, minLive)
	if live <= maxGoal-Headroom {
		return int(Headroom * 100 / live)
	}
	if live >= maxGoal {
		return largePercent
	}
	return max(int((maxGoal-live)*100/live), largePercent)
}

// Tuner retunes the collector after every cycle until Stop.
type Tuner struct {
	stopped atomic.Bool
	// previous is the GOGC in force when Start replaced it.
	previous int
	// tuned, when set (by tests), receives each GOGC set after a cycle
	// that finds room in it.
	tuned chan<- int
}

// Start begins tuning, unless getenv("GOGC") is set: then it returns
// nil, and the runtime keeps the user's setting. A nil *Tuner's Stop does
// nothing.
func Start(getenv func(string) string) *Tuner {
	return start(getenv, nil)
}

// start is Start with the channel that receives each GOGC set after a
// cycle (nil for none).
func start(getenv func(string) string, tuned chan<- int) *Tuner {
	if getenv("GOGC") != "" {
		return nil
	}
	t := &Tuner{tuned: tuned}
	t.previous = debug.SetGCPercent(Percent(readLive()))
	t.arm()
	return t
}

// Stop ends the tuning and restores the GOGC Start found.
func (t *Tuner) Stop() {
	if t == nil || t.stopped.Swap(true) {
		return
	}
	debug.SetGCPercent(t.previous)
}

// sentinel is an object the next collection frees: its cleanup marks the
// end of a cycle. It holds a pointer so that it is allocated alone, not
// in a block of tiny objects that outlives it.
type sentinel struct{ _ *byte }

// arm asks to be called back after the next collection.
func (t *Tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *Tuner) { t.cycleEnded() }, t)
}

// cycleEnded sets the GOGC for the live heap the cycle left and waits
// for the next.
func (t *Tuner) cycleEnded() {
	if t.stopped.Load() {
		return
	}
	percent := Percent(readLive())
	debug.SetGCPercent(percent)
	select {
	case t.tuned <- percent:
	default:
	}
	t.arm()
}

// readLive is the heap the last cycle marked live, in bytes; 0 before the
// first.
func readLive() uint64 {
	s := []metrics.Sample{{Name: liveHeap}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
