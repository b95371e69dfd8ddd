package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
)

func TestSSEEventFraming(t *testing.T) {
	for _, tc := range []struct {
		kind, data, want string
	}{
		{"", `{"v":1}`, "data: {\"v\":1}\n\n"},
		{"dropped", "7", "event: dropped\ndata: 7\n\n"},
	} {
		if got := string(sseEvent(tc.kind, []byte(tc.data))); got != tc.want {
			t.Errorf("sseEvent(%q, %q) = %q, want %q", tc.kind, tc.data, got, tc.want)
		}
	}
}

// A client that reads nothing loses the events beyond its queue, counted,
// and publishing never waits for it.
func TestSlowClientLosesEventsCounted(t *testing.T) {
	h := newHub()
	slow, _ := h.join(func(time.Time) {})
	fast, _ := h.join(func(time.Time) {})
	const extra = 5
	for i := range clientQueue + extra {
		h.publish([]byte{byte(i)})
		<-fast.events
	}
	if got := h.droppedFor(slow); got != extra {
		t.Errorf("the slow client lost %d events, want %d", got, extra)
	}
	if got := h.droppedFor(fast); got != 0 {
		t.Errorf("the client that read every event lost %d", got)
	}
	if got := len(slow.events); got != clientQueue {
		t.Errorf("the slow client's queue holds %d events, want %d", got, clientQueue)
	}
}

func TestClientsAndHistoryAreBounded(t *testing.T) {
	h := newHub()
	for range MaxClients {
		if c, _ := h.join(func(time.Time) {}); c == nil {
			t.Fatal("a client below the bound was refused")
		}
	}
	if c, _ := h.join(func(time.Time) {}); c != nil {
		t.Errorf("client %d was let in, want refused", MaxClients+1)
	}
	for i := range MaxHistory + 10 {
		h.publish([]byte{byte(i)})
	}
	if len(h.history) != MaxHistory {
		t.Errorf("history holds %d events, want %d", len(h.history), MaxHistory)
	}
	if got := h.history[0][0]; got != byte(10) {
		t.Errorf("the oldest event kept is %d, want 10 (the first 10 let go)", got)
	}
}

func TestAnEventTooLargeLosesScenariosNotPooledFigures(t *testing.T) {
	ev := Event{V: Version, All: Figures{Requests: 42}}
	for range 2000 {
		ev.Scenarios = append(ev.Scenarios, Scenario{Name: strings.Repeat("s", 100)})
	}
	b, err := encodeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxEventSize {
		t.Errorf("encoded event is %d bytes, want at most %d", len(b), MaxEventSize)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.All.Requests != 42 || len(back.Scenarios) == 0 {
		t.Errorf("cut event has pooled requests %d and %d scenarios, want 42 and some", back.All.Requests, len(back.Scenarios))
	}
	if back.ScenariosLeftOut != 2000-len(back.Scenarios) {
		t.Errorf("cut event says %d scenarios left out, but holds %d of 2000", back.ScenariosLeftOut, len(back.Scenarios))
	}
}

// record is a request of the scenario that ended at the given time.
func record(tags *metrics.TagSet, ok bool, ttft float64) *llm.Record {
	r := &llm.Record{Tags: tags, OK: ok, TTFT: ttft, TPOT: 5, E2E: ttft + 100}
	if !ok {
		r.ErrorClass = "http_5xx"
	}
	return r
}

func TestCollectorSendsEachPeriodsRequestsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		progress := engine.Progress{
			Arrived:   []engine.TokenCount{{Scenario: "chat", Tokens: 300}},
			Scenarios: []engine.ScenarioProgress{{Name: "chat", Phase: engine.PhaseRunning, Elapsed: 10 * time.Second, Duration: 40 * time.Second, ActiveVUs: 3, MaxVUs: 4, IterationsEnded: 9}},
		}
		c := NewCollector(start, func() engine.Progress { return progress }, nil)
		tags := metrics.NewTagSet(map[string]string{"scenario": "chat"})
		for _, ttft := range []float64{100, 200, 300} {
			c.AddRequest(record(tags, true, ttft))
		}
		c.AddRequest(record(tags, false, 0))
		// A request of a scenario the progress no longer lists counts in
		// the pooled figures only, in this period only.
		c.AddRequest(record(metrics.NewTagSet(map[string]string{"scenario": "chat@1"}), true, 50))
		time.Sleep(2 * time.Second)
		ev := c.Next(time.Now())
		s := ev.Scenarios[0]
		if s.Requests != 4 || s.Failed != 1 || s.ReqRate != 2 || s.TokRate != 150 {
			t.Errorf("first period: %d requests, %d failed, %v req/s, %v tok/s; want 4, 1, 2, 150", s.Requests, s.Failed, s.ReqRate, s.TokRate)
		}
		var want metrics.Latencies
		for _, ms := range []float64{100, 200, 300} {
			want.Add(ms)
		}
		if s.TTFT != (Percentiles{want.Percentile(50), want.Percentile(90), want.Percentile(99)}) {
			t.Errorf("first period's TTFT %+v, want the summary's percentiles of 100, 200, 300 ms", s.TTFT)
		}
		if len(s.Errors) != 1 || s.Progress != 0.25 || s.ETA != 30 || s.VUs != 3 || s.Iterations != 9 {
			t.Errorf("first period: errors %v, progress %v, ETA %v, VUs %d, iterations %d", s.Errors, s.Progress, s.ETA, s.VUs, s.Iterations)
		}
		if ev.All.Requests != 5 || ev.All.TTFT.P99 != s.TTFT.P99 || ev.All.TTFT.P50 == s.TTFT.P50 {
			t.Errorf("pooled figures %+v, want the scenario's %+v and the request of chat@1", ev.All, s.Figures)
		}
		time.Sleep(time.Second)
		if next := c.Next(time.Now()); next.Scenarios[0].Requests != 0 || next.All.Requests != 0 || next.All.TokRate != 0 || next.Period != 1 {
			t.Errorf("a period with no request counted %d requests (%d pooled), %v tok/s over %v s", next.Scenarios[0].Requests, next.All.Requests, next.All.TokRate, next.Period)
		}
	})
}

// Beside the requests, an event carries what the run read at its end:
// each scenario's drops and mean arrival lag of the period, the
// inter-token gaps' percentiles, the thresholds so far, the levels set,
// and the GPUs' energy per output token of the period.
func TestCollectorReadsLagDropsITLThresholdsLevelsAndEnergy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		sp := engine.ScenarioProgress{Name: "open", Phase: engine.PhaseRunning, Duration: time.Minute, Lagged: 4, LagTotal: 8 * time.Millisecond}
		sp.Dropped[0] = 3
		progress := engine.Progress{Arrived: []engine.TokenCount{{Scenario: "open", Tokens: 300}}, Scenarios: []engine.ScenarioProgress{sp}}
		power := 150.0
		gpus := func() []serverwatch.Now { return []serverwatch.Now{{Kind: "gpu", URL: "nvidia-smi", Power: &power}} }
		c := NewCollector(start, func() engine.Progress { return progress }, gpus)
		observed := 0.9
		c.ReadThresholds(func() []threshold.Result {
			return []threshold.Result{
				{Key: "llm_ttft", Source: "p(99)<500", Value: observed, Evaluated: true, Passed: false},
				{Key: "llm_tpot", Source: "p(99)<50", Passed: true, Note: "no samples yet"},
			}
		})
		c.SetLevels(&summary.Capacity{Variable: "concurrency", SLO: summary.SLO{TTFTP99: 100},
			Levels: []summary.CapacityLevel{{Scenario: "c1", Level: 1, OutputThroughput: 80, TTFTP99: 40, MeetsSLO: true}}})
		var rec llm.Record
		(&llm.Result{OK: true, TTFT: 20, E2E: 90, ITL: []float64{10, 20, 30}}).Record(&rec, metrics.NewTagSet(map[string]string{"scenario": "open"}), nil)
		c.AddRequest(&rec)
		time.Sleep(2 * time.Second)
		ev := c.Next(time.Now())
		s := ev.Scenarios[0]
		if s.PeriodDropped != 3 || s.Lagged != 4 || s.Lag != 2 {
			t.Errorf("first period: %d dropped, %d lagged at %v ms; want 3, 4 at 2 ms", s.PeriodDropped, s.Lagged, s.Lag)
		}
		var gaps metrics.Latencies
		for _, ms := range []float64{10, 20, 30} {
			gaps.Add(ms)
		}
		if s.ITL != (Percentiles{gaps.Percentile(50), gaps.Percentile(90), gaps.Percentile(99)}) {
			t.Errorf("ITL %+v, want the summary's percentiles of the gaps 10, 20, 30 ms", s.ITL)
		}
		if ev.JoulesPerToken == nil || *ev.JoulesPerToken != 1 {
			t.Errorf("energy per token %v, want 150 W × 2 s / 300 tokens = 1 J", ev.JoulesPerToken)
		}
		want := []Threshold{{Metric: "llm_ttft", Source: "p(99)<500", Value: &observed}, {Metric: "llm_tpot", Source: "p(99)<50", Passed: true, Note: "no samples yet"}}
		if len(ev.Thresholds) != 2 || ev.Thresholds[0].Value == nil || *ev.Thresholds[0].Value != observed || ev.Thresholds[0].Passed ||
			ev.Thresholds[1].Value != nil || ev.Thresholds[1] != want[1] {
			t.Errorf("thresholds %+v, want %+v", ev.Thresholds, want)
		}
		if len(ev.Levels) != 1 || ev.Levels[0] != (Level{Variable: "concurrency", Level: 1, Scenario: "c1", TokRate: 80, TTFTP99: 40, Verdict: "met"}) ||
			ev.SLO == nil || ev.SLO.TTFTP99 != 100 {
			t.Errorf("levels %+v and SLO %+v, want concurrency 1's and TTFT p99 100 ms", ev.Levels, ev.SLO)
		}
		// The next period: nothing dropped, 2 iterations late by 5 ms each,
		// no token: no energy per token.
		sp.Lagged, sp.LagTotal = 6, 18*time.Millisecond
		progress.Scenarios = []engine.ScenarioProgress{sp}
		time.Sleep(time.Second)
		next := c.Next(time.Now()).Scenarios[0]
		if next.PeriodDropped != 0 || next.Dropped != 3 || next.Lagged != 2 || next.Lag != 5 {
			t.Errorf("second period: %d dropped (%d in all), %d lagged at %v ms; want 0 (3), 2 at 5 ms", next.PeriodDropped, next.Dropped, next.Lagged, next.Lag)
		}
	})
}

// A search's levels carry their rounds' verdicts, inconclusive included;
// a sweep's without an SLO none.
func TestCollectorLevelVerdicts(t *testing.T) {
	c := NewCollector(time.Now(), func() engine.Progress { return engine.Progress{} }, nil)
	rows := []summary.CapacityLevel{{Scenario: "chat@1", Level: 1}, {Scenario: "chat@2", Level: 2}}
	c.SetLevels(&summary.Capacity{Variable: "rate", Levels: rows, SLO: summary.SLO{TTFTP99: 100},
		Search: &summary.CapacitySearch{Levels: []summary.SearchLevel{{Level: 1, Verdict: "met"}, {Level: 2, Verdict: "inconclusive"}}}})
	if ev := c.Next(time.Now()); len(ev.Levels) != 2 || ev.Levels[0].Verdict != "met" || ev.Levels[1].Verdict != "inconclusive" {
		t.Errorf("a search's levels %+v, want met and inconclusive", ev.Levels)
	}
	c.SetLevels(&summary.Capacity{Variable: "concurrency", Levels: rows})
	if ev := c.Next(time.Now()); len(ev.Levels) != 2 || ev.Levels[0].Verdict != "" || ev.SLO != nil {
		t.Errorf("a sweep's levels without an SLO %+v (SLO %+v), want no verdict", ev.Levels, ev.SLO)
	}
}

// A page that reads nothing holds its connection while the dashboard
// sends on: the others are not held back, and once it reads it is told
// how many events it lost.
func TestServerStreamsHistoryThenLiveAndTellsDrops(t *testing.T) {
	progress := engine.Progress{Scenarios: []engine.ScenarioProgress{{Name: "chat", Phase: engine.PhaseRunning}}}
	d, err := Listen(Config{Addr: "127.0.0.1:0", Period: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	d.Start(NewCollector(time.Now(), func() engine.Progress { return progress }, nil))
	defer d.Stop(context.Background())
	d.send(Event{V: Version, Elapsed: 1})

	resp, err := http.Get(d.URL() + "events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	lines := bufio.NewReader(resp.Body)
	readEvent := func() (kind, data string) {
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			switch {
			case line == "\n":
				return kind, data
			case strings.HasPrefix(line, "event: "):
				kind = strings.TrimSpace(strings.TrimPrefix(line, "event: "))
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimSpace(strings.TrimPrefix(line, "data: "))
			}
		}
	}
	if _, data := readEvent(); data != `{"v":1,"t":1,"period":0,"scenarios":null,"all":{"requests":0,"failed":0,"reqRate":0,"tokRate":0,"ttft":{"p50":0,"p90":0,"p99":0},"tpot":{"p50":0,"p90":0,"p99":0},"e2e":{"p50":0,"p90":0,"p99":0},"itl":{"p50":0,"p90":0,"p99":0}}}` {
		t.Errorf("first event (the history) = %s", data)
	}
	// This page stops reading: large events fill the connection, then its
	// queue; publishing goes on regardless. How many it takes depends on
	// the machine's socket buffers, so events are sent until the hub has
	// dropped one for the page.
	sendUntilDropped(t, d)
	d.send(Event{V: Version, Elapsed: 1000})
	var dropped string
	for dropped == "" {
		kind, data := readEvent()
		if kind == "dropped" {
			dropped = data
		}
	}
	if dropped == "0" {
		t.Errorf("told of %s dropped events, want some", dropped)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1))
}

func TestListenOnAnAddressInUseFails(t *testing.T) {
	first, err := Listen(Config{Addr: "127.0.0.1:0", Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop(context.Background())
	addr := strings.TrimSuffix(strings.TrimPrefix(first.URL(), "http://"), "/")
	_, err = Listen(Config{Addr: addr, Period: time.Second})
	if err == nil || !strings.Contains(err.Error(), "listening on "+addr) {
		t.Errorf("second Listen on %s: %v, want an error naming the address", addr, err)
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:5665": true, "[::1]:5665": true, "localhost:1": true, "0.0.0.0:5665": false, ":5665": false, "10.0.0.1:80": false} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// A dashboard off the loopback interface is warned of, naming the flag
// and the address, and saying how to keep it to this host; one on it is
// not.
func TestExposureWarning(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:5665", "[::1]:0", "localhost:5665"} {
		if w := ExposureWarning("--dashboard", addr); w != "" {
			t.Errorf("ExposureWarning(%q) = %q, want none", addr, w)
		}
	}
	w := ExposureWarning("--addr", "0.0.0.0:5665")
	for _, want := range []string{"--addr 0.0.0.0:5665", "anyone who reaches it", "127.0.0.1:PORT"} {
		if !strings.Contains(w, want) {
			t.Errorf("ExposureWarning(0.0.0.0:5665) = %q: it does not say %q", w, want)
		}
	}
}

// droppedInAll is how many events the hub dropped for all its pages.
func droppedInAll(d *Dashboard) int64 {
	d.hub.mu.Lock()
	defer d.hub.mu.Unlock()
	var n int64
	for c := range d.hub.clients {
		n += c.dropped
	}
	return n
}

// A scenario's bar and ETA are the terminal live view's: an
// iteration-based scenario's by its iterations too (its duration is only
// its maxDuration), and one the run stopped early stays where it stopped.
func TestScenarioProgressIsTheLiveViews(t *testing.T) {
	iterations := engine.ScenarioProgress{Name: "batch", Phase: engine.PhaseRunning, Elapsed: 5 * time.Second, Duration: 10 * time.Minute,
		Iterations: 100, IterationsEnded: 50}
	stopped := engine.ScenarioProgress{Name: "chat", Phase: engine.PhaseDone, Interrupted: true, Elapsed: 10 * time.Second, Duration: 40 * time.Second}
	progress := engine.Progress{Scenarios: []engine.ScenarioProgress{iterations, stopped}}
	c := NewCollector(time.Now(), func() engine.Progress { return progress }, nil)
	ev := c.Next(time.Now())
	for i, sp := range progress.Scenarios {
		s := ev.Scenarios[i]
		left, _ := sp.Remaining()
		if s.Progress != sp.Fraction() || s.ETA != left.Seconds() {
			t.Errorf("%s: progress %v, ETA %v s; want the live view's %v and %v s", s.Name, s.Progress, s.ETA, sp.Fraction(), left.Seconds())
		}
	}
	if s := ev.Scenarios[0]; s.Progress != 0.5 || s.ETA != 5 {
		t.Errorf("batch, 50 of 100 iterations in 5 s: progress %v, ETA %v s; want 0.5 and 5 s", s.Progress, s.ETA)
	}
	if s := ev.Scenarios[1]; s.Progress != 0.25 || s.ETA != 0 {
		t.Errorf("chat, stopped at 10 s of 40 s: progress %v, ETA %v s; want 0.25 and 0", s.Progress, s.ETA)
	}
}
