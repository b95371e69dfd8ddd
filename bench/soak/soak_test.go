package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/summary"
)

// series returns one sample every 2 s for a minute, with rss(t) MiB.
func series(rss func(t time.Duration) float64) []sample {
	var s []sample
	for t := time.Duration(0); t <= time.Minute; t += 2 * time.Second {
		s = append(s, sample{at: t, rssKiB: int64(rss(t) * 1024), fds: 60})
	}
	return s
}

func rssRule() flatRule { return flatRule{what: "RSS", unit: " MiB", pct: 10, floor: 16} }

func rss(samples []sample) []point { return points(samples, sample.rssMiB) }

func TestJudgeFlat(t *testing.T) {
	sawtooth := func(t time.Duration) float64 { return 100 + float64(int(t.Seconds())%10) }
	leak := func(t time.Duration) float64 { return 100 + t.Seconds() }
	for _, tc := range []struct {
		name    string
		samples []sample
		want    string
	}{
		{"a sawtooth around a level", series(sawtooth), "FLAT"},
		{"a steady leak of 1 MiB/s", series(leak), "GROWING"},
		{"growth just over the floor", series(func(t time.Duration) float64 {
			if t > 40*time.Second {
				return 117
			}
			return 100
		}), "GROWING"},
		{"a few spikes on a flat level", series(func(t time.Duration) float64 {
			if s := int(t.Seconds()); s == 44 || s == 56 {
				return 160
			}
			return 100
		}), "FLAT"},
		{"a late leak only the trend shows", series(func(t time.Duration) float64 {
			if t > 40*time.Second {
				return 100 + 2*(t-40*time.Second).Seconds()
			}
			return 100
		}), "GROWING"},
		{"two samples", series(leak)[:2], "INCONCLUSIVE"},
	} {
		v := judgeFlat(rss(tc.samples), time.Minute, rssRule())
		if v.word() != tc.want {
			t.Errorf("%s: %s, want %s\n%s", tc.name, v.word(), tc.want, v)
		}
	}
}

// Samples taken after the load (the summary, the graceful stop) are left
// out of the verdict.
func TestJudgeFlatIgnoresTheTail(t *testing.T) {
	s := series(func(t time.Duration) float64 {
		if t > 50*time.Second {
			return 500
		}
		return 100
	})
	if v := judgeFlat(rss(s), 50*time.Second, rssRule()); !v.flat {
		t.Errorf("the tail after the load counted:\n%s", v)
	}
	if v := judgeFlat(rss(s), time.Minute, rssRule()); v.flat {
		t.Errorf("growth during the load not seen:\n%s", v)
	}
}

func TestParseProc(t *testing.T) {
	rss, hwm, err := parseStatus([]byte("Name:\tllmrun\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t9\n"))
	if err != nil || rss != 102400 || hwm != 204800 {
		t.Errorf("parseStatus = %d, %d, %v", rss, hwm, err)
	}
	if _, _, err := parseStatus([]byte("Name:\tzombie\nState:\tZ (zombie)\n")); err == nil {
		t.Error("parseStatus accepted a status without memory lines")
	}
	self, err := readProc(os.Getpid())
	if err != nil || self.rssKiB <= 0 || self.hwmKiB < self.rssKiB || self.threads < 1 || self.fds < 3 {
		t.Errorf("readProc(self) = %+v, %v", self, err)
	}
}

func TestLineCounter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	c := &lineCounter{path: path}
	if n, err := c.update(); n != 0 || err != nil {
		t.Fatalf("before the file exists: %d, %v", n, err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, chunk := range []string{"{}\n{}\n{\"ok\"", ":true}\n", strings.Repeat("{}\n", 100000)} {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
		want := []int64{2, 3, 100003}[i]
		if n, err := c.update(); n != want || err != nil {
			t.Errorf("after write %d: %d lines, %v; want %d", i, n, err, want)
		}
	}
}

// addTimeout adds to o one request that failed as a timeout, seen by
// the simulator and written to the JSONL file, but no fault.
func addTimeout(o *outcome) {
	o.sum.Errors[3].Count++
	o.sum.Serving.Failed++
	o.sum.Serving.Requests++
	o.lines++
	o.sum.Outputs[0].Written++
	o.stats.Received++
}

// consistent is an outcome in which every request is accounted for.
func consistent() outcome {
	return outcome{
		sum: &summary.Summary{
			Serving: summary.Serving{Requests: 100, OK: 80, Failed: 20, OutputTokens: 8000},
			Errors: []summary.ErrorClassCount{
				{Class: "cut", Count: 7}, {Class: "http_5xx", Count: 5}, {Class: "decode", Count: 4},
				{Class: "timeout", Count: 3}, {Class: "stream_error", Count: 1},
			},
			Outputs: []summary.OutputReport{{Output: "jsonl requests.jsonl", Written: 100}},
		},
		stats: llmsim.Stats{
			Received:  90, // 100 minus refuse, http_5xx and wrong_content_type
			Completed: 83, // 80 and 3 streams whose fault struck after their last token
			Tokens:    8500,
			Faults: map[string]uint64{"refuse": 3, "reset": 4, "http_5xx": 5, "malformed": 2, "wrong_content_type": 2,
				"stall": 3, "error_event": 1, "big_line": 6, "slow_headers": 2},
		},
		lines: 100,
	}
}

func failed(checks []check) []string {
	var bad []string
	for _, c := range checks {
		if !c.ok {
			bad = append(bad, c.what+": "+c.got+", want "+c.want)
		}
	}
	return bad
}

func TestAccountChecks(t *testing.T) {
	if bad := failed(accountChecks(consistent())); len(bad) > 0 {
		t.Fatalf("a consistent run failed: %v", bad)
	}
	for _, tc := range []struct {
		name  string
		spoil func(*outcome)
		want  string
	}{
		{"a lost JSONL line", func(o *outcome) { o.lines-- }, "JSONL lines"},
		{"a dropped record", func(o *outcome) { o.sum.Outputs[0].Dropped = 1 }, "JSONL output"},
		{"a request the client never counted", func(o *outcome) { o.stats.Received++ }, "simulator: requests received"},
		{"a timeout no stall explains", addTimeout, "error class timeout"},
		{"a class no fault explains", func(o *outcome) {
			o.sum.Errors[0].Class = "connect"
		}, "error class connect"},
		{"a script error", func(o *outcome) { o.sum.OtherScriptErrors = 1 }, "script errors"},
		{"script errors with a message", func(o *outcome) {
			o.sum.ScriptErrors = []summary.ErrorCount{{Message: "TypeError at soak.js:9", Count: 3}}
		}, "script errors"},
		{"a success the simulator never finished", func(o *outcome) { o.stats.Completed = 79 }, "llmrun: completed"},
		{"tokens counted twice", func(o *outcome) { o.sum.Serving.OutputTokens = 16000 }, "output tokens"},
	} {
		o := consistent()
		tc.spoil(&o)
		bad := failed(accountChecks(o))
		if len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), tc.want) {
			t.Errorf("%s: failed checks %v, want one about %q", tc.name, bad, tc.want)
		}
	}
}

// A timeout on a sound answer (a simulator too slow for the request
// timeout on a loaded machine) is accounted when the simulator saw its
// client give up on it, and only then.
func TestAccountChecksSoundAnswerGivenUp(t *testing.T) {
	o := consistent()
	addTimeout(&o)
	o.stats.GivenUp = 1
	if bad := failed(accountChecks(o)); len(bad) > 0 {
		t.Errorf("a timeout the simulator saw given up: %v", bad)
	}
	o.stats.GivenUp = 2
	if bad := failed(accountChecks(o)); len(bad) == 0 {
		t.Error("a sound answer given up that no timeout accounts for passed")
	}
}

// Requests interrupted by the end of the run may be missing from the
// simulator's counts, but no more of them.
func TestAccountChecksInterrupted(t *testing.T) {
	o := consistent()
	o.sum.Serving.Interrupted = 2
	o.stats.Received++ // one interrupted request reached the engine, one did not
	if bad := failed(accountChecks(o)); len(bad) > 0 {
		t.Errorf("within the interrupted slack: %v", bad)
	}
	o.sum.Serving.Interrupted = 0
	if bad := failed(accountChecks(o)); len(bad) == 0 {
		t.Error("a request received beyond the client's count passed")
	}
}

func TestCheckFault(t *testing.T) {
	for _, spec := range defaultFaults {
		if err := checkFault(spec); err != nil {
			t.Errorf("default fault %s: %v", spec, err)
		}
	}
	for _, spec := range []string{"teapot:0.1", "stall:0.1:after=2,duration=1s"} {
		if err := checkFault(spec); err == nil {
			t.Errorf("%s accepted", spec)
		}
	}
}

func TestGCTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.err")
	g := &gcTrace{path: path}
	if err := g.update(); err != nil || len(g.live) != 0 {
		t.Fatalf("before the file exists: %v, %v", g.live, err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A gctrace line split across two writes, a forced collection, and
	// lines of llmrun's own between them.
	writes := []string{
		"gc 1 @0.070s 5%: 0.16+10+0.012 ms clock, 0.33+5.4/3.5/0+0.025 ms cpu, 3->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\ngc 2 @61.5s 1%: 0.1+8+0.01 ms clock, ",
		"0.2+1/3/1+0.01 ms cpu, 230->240->118 MB, 236 MB goal, 0 MB stacks, 0 MB globals, 2 P\nwarning: gc 3 is not a trace line\n",
		"gc 3 @120.25s 1%: 0.1+8+0.01 ms clock, 0.2+1/3/1+0.01 ms cpu, 120->121->119 MB, 236 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n",
	}
	for _, w := range writes {
		if _, err := f.WriteString(w); err != nil {
			t.Fatal(err)
		}
		if err := g.update(); err != nil {
			t.Fatal(err)
		}
	}
	want := []point{{70 * time.Millisecond, 1}, {61500 * time.Millisecond, 118}, {120250 * time.Millisecond, 119}}
	if len(g.live) != len(want) {
		t.Fatalf("live heap %v, want %v", g.live, want)
	}
	for i := range want {
		if g.live[i] != want[i] {
			t.Errorf("collection %d: %v, want %v", i, g.live[i], want[i])
		}
	}
	if h, ok := g.last(); !ok || h != 119 {
		t.Errorf("last = %v, %v; want 119", h, ok)
	}
}

func TestWithGCTrace(t *testing.T) {
	env := withGCTrace([]string{"HOME=/h", "GODEBUG=madvdontneed=1"})
	if got := env[len(env)-1]; got != "GODEBUG=madvdontneed=1,gctrace=1" {
		t.Errorf("GODEBUG %q", got)
	}
	if got := withGCTrace([]string{"HOME=/h"}); got[len(got)-1] != "GODEBUG=gctrace=1" {
		t.Errorf("env %q", got)
	}
}

// The live heap fails the run when it grows, not when too few collections
// ran to judge it.
func TestJudgeFlatnessHeap(t *testing.T) {
	c := config{duration: time.Minute, flatPct: 10, flatMiB: 16}
	flat := series(func(time.Duration) float64 { return 100 })
	for _, tc := range []struct {
		name string
		heap []point
		want bool
	}{
		{"two collections", []point{{time.Second, 40}, {50 * time.Second, 90}}, true},
		{"a flat heap", rss(flat), true},
		{"a growing heap", rss(series(func(t time.Duration) float64 { return 40 + t.Seconds() })), false},
	} {
		var out strings.Builder
		if got := judgeFlatness(c, &out, clientRun{samples: flat, liveHeap: tc.heap}); got != tc.want {
			t.Errorf("%s: pass %v, want %v\n%s", tc.name, got, tc.want, out.String())
		}
	}
}
