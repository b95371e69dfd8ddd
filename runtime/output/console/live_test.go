package console

import (
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
)

// record is a request of scenario that ended at the run's second at, with
// a TTFT (ms), or failed with class.
func record(tags *metrics.TagSet, start time.Time, at time.Duration, ttft float64, class string) *llm.Record {
	r := &llm.Record{Time: start.Add(at), Tags: tags, OK: class == "", ErrorClass: class, TTFT: ttft, E2E: 2 * ttft, OutputTokens: 10}
	return r
}

// The live view's figures of a running scenario are those of its last
// window only, of a finished one its whole measured run; a waiting one
// has none; errors are listed by class, most first.
func TestLiveFigures(t *testing.T) {
	start := time.Unix(1000, 0)
	l := NewLive(start, 5*time.Second)
	l.now = func() time.Time { return start.Add(20 * time.Second) }
	c1 := metrics.NewTagSet(map[string]string{"scenario": "c1"})
	c2 := metrics.NewTagSet(map[string]string{"scenario": "c2", "model": "m"})
	// c1 ran from 0 to 10 s: 10 requests at 100 ms.
	for i := range 10 {
		l.AddRequest(record(c1, start, time.Duration(i)*time.Second+500*time.Millisecond, 100, ""))
	}
	// c2 runs from 10 s: its early slow requests, some added after later
	// ones, fall out of its window; the last 5 s have 4 at 200-230 ms
	// (p50 210, as the summary's percentiles have it) and 3 failures:
	// 7 requests in 5 s.
	for i := range 4 {
		l.AddRequest(record(c2, start, 11*time.Second, 900, ""))
		l.AddRequest(record(c2, start, 16*time.Second+time.Duration(i)*time.Second, 200+10*float64(i), ""))
	}
	l.AddRequest(record(c2, start, 17*time.Second, 0, "timeout"))
	l.AddRequest(record(c2, start, 18*time.Second, 0, "timeout"))
	l.AddRequest(record(c2, start, 19*time.Second, 0, "http_5xx"))

	p := engine.Progress{
		Elapsed: 20 * time.Second, MaxVUs: 8, ActiveVUs: 4, Requests: 21, Failed: 3, OutputTokens: 1500,
		Arrived: []engine.TokenCount{{Scenario: "c1", Model: "m", Tokens: 1000}, {Scenario: "c2", Model: "m", Tokens: 500}},
		Scenarios: []engine.ScenarioProgress{
			{Name: "c1", Phase: engine.PhaseDone, Elapsed: 10 * time.Second, Measured: 10 * time.Second, Duration: 10 * time.Second, MaxVUs: 4},
			{Name: "c2", Phase: engine.PhaseRunning, Elapsed: 10 * time.Second, Measured: 10 * time.Second, Duration: 40 * time.Second, ActiveVUs: 4, MaxVUs: 4},
			{Name: "c3", Phase: engine.PhaseWaiting, StartTime: 50 * time.Second, Duration: 10 * time.Second, MaxVUs: 4},
			{Name: "c4", Phase: engine.PhaseWaiting, StartAfter: "c3", Duration: 10 * time.Second, MaxVUs: 8},
			{Name: "c5", Phase: engine.PhaseNotRun, StartAfter: "c4", Duration: 10 * time.Second, MaxVUs: 16},
		},
	}
	var meter ProgressMeter
	got := l.Block(p, &meter, 0)
	want := []string{
		"running     20s  VUs 4/8  requests 21  failed 3  output 75 tok/s  scenarios 1/5 done",
		"scenario  phase    progress                   VUs   req/s  tok/s  TTFT p50/p99  errors",
		"c1        done     ████████████ 100%          0/4   1      100    100/100 ms    0 errors",
		"c2        running  ███░░░░░░░░░  25% ETA 30s  4/4   1.40   50     210.0/230 ms  timeout 2, http_5xx 1",
		"c3        waiting  starts in 30s              0/4   -      -      -             -",
		"c4        waiting  after c3                   0/8   -      -      -             -",
		"c5        not run  -                          0/16  -      -      -             -",
		"figures of the last 5s; of its whole run once a scenario is done",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Block:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cut := l.Block(p, &meter, 40); len([]rune(cut[3])) != 39 || !strings.HasPrefix(cut[3], "c2        running  ███") {
		t.Errorf("Block cut to 40 columns: %q, want 39 runes of the c2 row", cut[3])
	}

	ended := map[string]bool{}
	lines := l.Lines(p, ended)
	wantLines := []string{
		"[20s] c1: done 100%, VUs 0/4, 1 req/s, 100 tok/s, TTFT p50/p99 100/100 ms, 0 errors (whole run)",
		"[20s] c2: running 25% ETA 30s, VUs 4/4, 1.40 req/s, 50 tok/s, TTFT p50/p99 210.0/230 ms, timeout 2, http_5xx 1 (last 5s)",
		"[20s] c5: not run",
	}
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("Lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
	// A finished scenario's line, or one that will not run, is printed
	// once.
	if again := l.Lines(p, ended); len(again) != 1 || !strings.HasPrefix(again[0], "[20s] c2: running") {
		t.Errorf("Lines again: %q, want only c2's", again)
	}
}

// A write to the screen goes above the live view's block: the block is
// erased (cursor up to its first line, cleared to the end of the screen),
// the write made, the block drawn again; without a block, writes pass
// through untouched.
func TestScreenKeepsWritesClearOfTheBlock(t *testing.T) {
	var out strings.Builder
	scr := NewScreen(&out)
	scr.Write([]byte("before\n"))
	scr.show([]string{"line 1", "line 2", "line 3"})
	scr.Write([]byte("a log line\n"))
	scr.show([]string{"new 1", "new 2"})
	scr.show(nil)
	scr.Write([]byte("after\n"))
	want := "before\n" +
		"line 1\nline 2\nline 3" +
		"\r\x1b[2A\x1b[J" + "a log line\n" + "line 1\nline 2\nline 3" +
		"\r\x1b[2A\x1b[J" + "new 1\nnew 2" +
		"\r\x1b[1A\x1b[J" +
		"after\n"
	if out.String() != want {
		t.Errorf("screen wrote\n%q\nwant\n%q", out.String(), want)
	}
}

// BenchmarkLiveAddRequest is what the live view costs per request that
// ends: a lock, a map lookup and the aggregation of one record, seconds
// moving on every 1,000 requests.
func BenchmarkLiveAddRequest(b *testing.B) {
	start := time.Unix(1000, 0)
	l := NewLive(start, LiveWindow)
	tags := metrics.NewTagSet(map[string]string{"scenario": "s"})
	r := record(tags, start, 0, 120, "")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.Time = start.Add(time.Duration(i/1000) * time.Second)
		r.TTFT = float64(50 + i%200)
		l.AddRequest(r)
		i++
	}
}

// A running scenario's window is its last whole seconds and the current
// one, over the time they span: at 20.5 s, a 5 s window counts what ended
// from 15 s on, over 5.5 s, however the engine counts its own time.
func TestLiveWindowSpansItsSeconds(t *testing.T) {
	start := time.Unix(1000, 0)
	l := NewLive(start, 5*time.Second)
	l.now = func() time.Time { return start.Add(20*time.Second + 500*time.Millisecond) }
	tags := metrics.NewTagSet(map[string]string{"scenario": "s"})
	for _, at := range []time.Duration{14900 * time.Millisecond, 15100 * time.Millisecond, 17 * time.Second, 20400 * time.Millisecond} {
		l.AddRequest(record(tags, start, at, 100, ""))
	}
	rows := l.rows(engine.Progress{Scenarios: []engine.ScenarioProgress{
		{Name: "s", Phase: engine.PhaseRunning, Elapsed: 9 * time.Second, Measured: 9 * time.Second, Duration: time.Minute},
	}})
	if r := rows[0]; r.requests != 3 || r.reqRate != 3/5.5 {
		t.Errorf("window: %d requests at %v req/s, want 3 (from 15 s on) over 5.5 s", r.requests, r.reqRate)
	}
}

// A scenario the run's stop ended at 30 % of its plan is shown as
// interrupted there, in the table and in the plain lines, not as done
// 100 %; one that ended on its own before the stop is done.
func TestLiveShowsWhereAnInterruptedScenarioStopped(t *testing.T) {
	start := time.Unix(1000, 0)
	l := NewLive(start, 5*time.Second)
	l.now = func() time.Time { return start.Add(3 * time.Second) }
	p := engine.Progress{
		Elapsed: 3 * time.Second, MaxVUs: 12,
		Scenarios: []engine.ScenarioProgress{
			{Name: "chat", Phase: engine.PhaseDone, Interrupted: true, Elapsed: 3 * time.Second, Measured: 3 * time.Second, Duration: 10 * time.Second, PeakVUs: 3, MaxVUs: 8},
			{Name: "warm", Phase: engine.PhaseDone, Interrupted: true, Elapsed: time.Second, Measured: time.Second, Duration: time.Second, PeakVUs: 4, MaxVUs: 4},
		},
	}
	var meter ProgressMeter
	block := strings.Join(l.Block(p, &meter, 0), "\n")
	for _, want := range []string{"chat      interrupted  ███░░░░░░░░░  30%", "warm      done         ████████████ 100%"} {
		if !strings.Contains(block, want) {
			t.Errorf("Block lacks %q:\n%s", want, block)
		}
	}
	lines := strings.Join(l.Lines(p, map[string]bool{}), "\n")
	for _, want := range []string{"[3s] chat: interrupted at 30%,", "[3s] warm: done 100%,"} {
		if !strings.Contains(lines, want) {
			t.Errorf("Lines lack %q:\n%s", want, lines)
		}
	}
}

// During a capacity search the view shows the round that runs: its
// scenario's records (tagged with the round's name), its time, and a
// line of how far the search is; a scenario whose first round ended is
// not shown as done.
func TestLiveSearchRound(t *testing.T) {
	start := time.Unix(1000, 0)
	l := NewLive(start, 5*time.Second)
	l.now = func() time.Time { return start.Add(40 * time.Second) }
	l.search = func() string { return "1 level tried, capacity at least rate 4, 30s of the 10m0s budget" }
	round := metrics.NewTagSet(map[string]string{"scenario": "search@8", "rate": "8"})
	for i := range 10 {
		l.AddRequest(record(round, start, 35*time.Second+time.Duration(i)*400*time.Millisecond, 150, ""))
	}
	p := engine.Progress{
		Elapsed: 40 * time.Second, MaxVUs: 512, ActiveVUs: 3, Requests: 130, OutputTokens: 1300,
		Arrived: []engine.TokenCount{{Scenario: "search@4", Tokens: 1200}, {Scenario: "search@8", Tokens: 100}},
		// The declared scenario's own state: its first round, at level
		// 4, ended at 30 s.
		Scenarios: []engine.ScenarioProgress{{Name: "search", Phase: engine.PhaseDone, Elapsed: 30 * time.Second, Measured: 30 * time.Second,
			Duration: 30 * time.Second, ActiveVUs: 3, MaxVUs: 512}},
		Round: &engine.RoundProgress{Variable: "rate", Number: 2, Level: 8, Elapsed: 10 * time.Second, Duration: 30 * time.Second},
	}
	var meter ProgressMeter
	block := strings.Join(l.Block(p, &meter, 0), "\n")
	for _, want := range []string{"search@8  running", " 33% ETA 20s", "  2  ", "150/150 ms",
		"search: round 2 at rate 8, 10s of 30s; 1 level tried, capacity at least rate 4, 30s of the 10m0s budget"} {
		if !strings.Contains(block, want) {
			t.Errorf("the block lacks %q:\n%s", want, block)
		}
	}
	lines := strings.Join(l.Lines(p, map[string]bool{"search": true}), "\n")
	for _, want := range []string{"[40s] search@8: running 33% ETA 20s, VUs 3/512, 2 req/s", "TTFT p50/p99 150/150 ms",
		"[40s] search: round 2 at rate 8, 10s of 30s"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the lines lack %q:\n%s", want, lines)
		}
	}
	// Once the search is over, the scenario's figures are its rounds'.
	first := metrics.NewTagSet(map[string]string{"scenario": "search@4", "rate": "4"})
	for i := range 20 {
		l.AddRequest(record(first, start, time.Duration(i)*time.Second, 100, ""))
	}
	p.Round, p.Elapsed = nil, 50*time.Second
	p.Scenarios[0].Elapsed, p.Scenarios[0].Measured = 50*time.Second, 50*time.Second
	if got := strings.Join(l.Lines(p, map[string]bool{}), "\n"); !strings.Contains(got, "[50s] search: done 100%, VUs 3/512, 0.60 req/s, 26 tok/s") {
		t.Errorf("the search's scenario done says\n%s\nwant the 30 requests and 1300 tokens of its rounds over 50 s", got)
	}
}

// Once a search is over, a scenario's figures are its own rounds', not
// those of another scenario whose name starts with its name and an @.
func TestLiveSearchRoundsOfTheirScenarioOnly(t *testing.T) {
	start := time.Unix(1000, 0)
	l := NewLive(start, 5*time.Second)
	l.now = func() time.Time { return start.Add(50 * time.Second) }
	l.search = func() string { return "" }
	for _, name := range []string{"chat@4", "chat@eu@4", "chat@eu@8"} {
		tags := metrics.NewTagSet(map[string]string{"scenario": name, "rate": "4"})
		for i := range 10 {
			l.AddRequest(record(tags, start, time.Duration(i)*time.Second, 100, ""))
		}
	}
	done := func(name string) engine.ScenarioProgress {
		return engine.ScenarioProgress{Name: name, Phase: engine.PhaseDone, Elapsed: 50 * time.Second, Measured: 50 * time.Second,
			Duration: 50 * time.Second, ActiveVUs: 1, MaxVUs: 1}
	}
	p := engine.Progress{Elapsed: 50 * time.Second, Scenarios: []engine.ScenarioProgress{done("chat"), done("chat@eu")}}
	got := strings.Join(l.Lines(p, map[string]bool{}), "\n")
	for _, want := range []string{"[50s] chat: done 100%, VUs 1/1, 0.20 req/s", "[50s] chat@eu: done 100%, VUs 1/1, 0.40 req/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("the lines lack %q: each scenario's figures are its own rounds' (10 and 20 requests over 50 s)\n%s", want, got)
		}
	}
}
