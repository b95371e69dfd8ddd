package dashboard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/window"
)

// chatProgress is one scenario "chat" running with vus VUs.
func chatProgress(vus int64, tokens int64) func() engine.Progress {
	return func() engine.Progress {
		return engine.Progress{Arrived: []engine.TokenCount{{Scenario: "chat", Tokens: tokens}},
			Scenarios: []engine.ScenarioProgress{{Name: "chat", Phase: engine.PhaseRunning, ActiveVUs: vus, MaxVUs: int(vus), IterationsEnded: 10 * vus}}}
	}
}

// Instance 0's event pools its own requests with those another instance
// reported: the pooled percentiles are, to the bit, those of one window
// aggregate of every request (what llmrun merge computes from the
// instances' histograms), and the counts, tokens, VUs and iterations
// add up; a report that arrives after an event counts in the next.
func TestInstancesMergeIntoTheUnionsPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tags := metrics.NewTagSet(map[string]string{"scenario": "chat"})
	in := NewInstances(2)
	start := time.Now()
	own := NewCollector(start, chatProgress(2, 100), nil).WithInstances(in)
	peer := NewReporter(chatProgress(3, 40))
	union := window.Aggregate{CountITL: true}
	for i := range 500 {
		// Instance 1's latencies are slower: the union's p99 is theirs,
		// its p50 neither's alone.
		res := llm.Result{OK: i%25 != 0, TTFT: 20 + 80*rng.Float64(), TPOT: 5 + rng.Float64(), E2E: 300 + 100*rng.Float64(), PromptTokens: 7,
			ITL: []float64{4 + rng.Float64(), 5 + 10*rng.Float64(), 6 + rng.Float64()}}
		sink := own.AddRequest
		if i%2 == 1 {
			res.TTFT, res.E2E, res.ITL[1] = 3*res.TTFT, 2*res.E2E, 4*res.ITL[1]
			sink = peer.Collector().AddRequest
		}
		if !res.OK {
			res.Class = llm.ErrHTTP5xx
		}
		r := &llm.Record{}
		res.Record(r, tags, nil)
		sink(r)
		union.Add(r)
	}
	if err := in.Received(1, peer.Report(false)); err != nil {
		t.Fatal(err)
	}
	ev := own.Next(start.Add(2 * time.Second))
	for _, f := range []struct {
		name      string
		got, want Percentiles
	}{
		{"TTFT", ev.All.TTFT, percentiles(&union.TTFT)},
		{"TPOT", ev.All.TPOT, percentiles(&union.TPOT)},
		{"E2E", ev.All.E2E, percentiles(&union.E2E)},
		{"ITL", ev.All.ITL, percentiles(&union.ITL)},
		{"chat's TTFT", ev.Scenarios[0].TTFT, percentiles(&union.TTFT)},
	} {
		if f.got != f.want {
			t.Errorf("pooled %s %+v, want the union's %+v", f.name, f.got, f.want)
		}
	}
	s := ev.Scenarios[0]
	if ev.All.Requests != 500 || ev.All.Failed != union.Failed || ev.All.Errors["http_5xx"] != union.Failed || ev.All.TokRate != 70 {
		t.Errorf("pooled %d requests, %d failed, errors %v, %v tok/s; want 500, %d, 140 tokens over 2 s", ev.All.Requests, ev.All.Failed, ev.All.Errors, ev.All.TokRate, union.Failed)
	}
	if s.VUs != 5 || s.MaxVUs != 5 || s.Iterations != 50 {
		t.Errorf("chat: %d/%d VUs, %d iterations; want both instances' 5/5 and 50", s.VUs, s.MaxVUs, s.Iterations)
	}
	if len(ev.Instances) != 2 || ev.Instances[0].Requests != 250 || ev.Instances[1].Requests != 250 || ev.Instances[1].State != InstanceRunning {
		t.Errorf("instances %+v, want 0 and 1 running with 250 requests each", ev.Instances)
	}

	// Late: after the event, in the next one.
	peer.Collector().AddRequest(&llm.Record{Tags: tags, OK: true, TTFT: 1000, TPOT: 5, E2E: 2000})
	next := own.Next(start.Add(3 * time.Second))
	if next.All.Requests != 0 {
		t.Fatalf("an event with no report counted %d requests", next.All.Requests)
	}
	if err := in.Received(1, peer.Report(true)); err != nil {
		t.Fatal(err)
	}
	last := own.Next(start.Add(4 * time.Second))
	if last.All.Requests != 1 || last.All.TTFT.P50 != 1000 || last.Instances[1].Requests != 251 || last.Instances[1].State != InstanceDone {
		t.Errorf("the late report: %d requests, TTFT %+v, instance 1 %+v; want it in this event, instance 1 done", last.All.Requests, last.All.TTFT, last.Instances[1])
	}
	in.Lost(1, "connection closed")
	if got := own.Next(start.Add(5 * time.Second)).Instances[1]; got.State != InstanceDone || got.Lost != "" {
		t.Errorf("an instance that hung up after its last report: %+v, want done", got)
	}
}

// An instance that goes is named lost, with when and why, and its VUs no
// longer count; its requests so far stay.
func TestLostInstanceIsNamed(t *testing.T) {
	in := NewInstances(3)
	start := time.Now().Add(-14 * time.Second)
	own := NewCollector(start, chatProgress(1, 0), nil).WithInstances(in)
	for i := 1; i <= 2; i++ {
		peer := NewReporter(chatProgress(1, 0))
		peer.Collector().AddRequest(&llm.Record{Tags: metrics.NewTagSet(map[string]string{"scenario": "chat"}), OK: true, TTFT: 10, TPOT: 1, E2E: 20})
		if err := in.Received(i, peer.Report(false)); err != nil {
			t.Fatal(err)
		}
	}
	in.Lost(2, "connection closed")
	ev := own.Next(time.Now())
	got := ev.Instances[2]
	if got.State != InstanceLost || got.Lost != "connection closed" || got.LostAt < 14 || got.LostAt > 60 || got.Requests != 1 {
		t.Errorf("instance 2 %+v, want lost at about 14 s for its connection closed, its 1 request kept", got)
	}
	if ev.Instances[1].State != InstanceRunning || ev.Scenarios[0].VUs != 2 || ev.All.Requests != 2 {
		t.Errorf("instance 1 %+v, VUs %d, requests %d; want 1 running, its VU and instance 0's, both requests", ev.Instances[1], ev.Scenarios[0].VUs, ev.All.Requests)
	}
	if err := in.Received(2, NewReporter(chatProgress(1, 0)).Report(false)); err != nil || own.Next(time.Now()).Instances[2].State != InstanceLost {
		t.Errorf("a report after the instance was lost: %v, or it came back", err)
	}
}

// What is not a report is refused with the reason, never merged and never
// a panic: the other instances are peers instance 0 checks.
func TestHostileReportsAreRefused(t *testing.T) {
	var good metrics.Latencies
	good.Add(10)
	good.Add(20)
	hdr := summary.EncodeHDR(good.Histogram())
	scenario := func(fields string) string {
		return `{"scenarios":[{"name":"chat","vus":1,"maxVUs":1,"iterations":1,"dropped":0,"tokens":1,"requests":2,"failed":0,"promptTokens":1` + fields + `}],"health":{"cpu":0.1,"procs":2,"schedP99":0.1}}`
	}
	many := make([]string, maxReportScenarios+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name":"s%d"}`, i)
	}
	for _, tt := range []struct {
		name, msg, want string
	}{
		{"not JSON", "\x1b[31mhello", "not a dashboard report"},
		{"unknown field", `{"scenarios":[],"evil":1}`, `unknown field "evil"`},
		{"negative requests", strings.Replace(scenario(""), `"requests":2`, `"requests":-2`, 1), "-2 requests"},
		{"more failed than requests", strings.Replace(scenario(""), `"failed":0`, `"failed":3`, 1), "3 failed"},
		{"errors beyond failed", scenario(`,"errors":{"x":5}`), "(5 by class)"},
		{"garbage histogram", scenario(`,"ttft":{"min":1,"max":2,"hdr":"AAAA"}`), "ttft"},
		{"extremes outside", scenario(`,"ttft":{"min":1,"max":2,"hdr":"` + hdr + `"}`), "outside the histogram's"},
		{"more latencies than requests", strings.Replace(scenario(`,"ttft":{"min":10,"max":20,"hdr":"`+hdr+`"}`), `"requests":2`, `"requests":1`, 1), "2 latencies of 1 requests"},
		{"negative minimum", scenario(`,"ttft":{"min":-1,"max":20,"hdr":"` + hdr + `"}`), "not 0 ≤ min ≤ max"},
		{"too many scenarios", `{"scenarios":[` + strings.Join(many, ",") + `],"health":{}}`, "257 scenarios: at most 256"},
		{"no name", `{"scenarios":[{"name":""}],"health":{}}`, "a count out of range"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInstances(2)
			err := in.Received(1, []byte(tt.msg))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			c := NewCollector(time.Now(), chatProgress(1, 0), nil).WithInstances(in)
			if ev := c.Next(time.Now()); ev.All.Requests != 0 || ev.Instances[1].Requests != 0 {
				t.Errorf("a refused report was merged: %+v", ev)
			}
		})
	}
	if err := NewInstances(2).Received(2, []byte(`{}`)); err == nil {
		t.Error("a report of instance 2 of 2 was taken")
	}
	// A lost instance's reason is shown as text: no control character,
	// no bidirectional control (which would show the text reversed),
	// bounded; escaped as the console escapes a server's words.
	in := NewInstances(2)
	in.Lost(1, "sent what is not figures: \x1b[2J\u202e"+strings.Repeat("é", 400))
	got := in.list(time.Now(), time.Now(), false)[1].Lost
	if strings.ContainsAny(got, "\x1b\u202e") || !strings.Contains(got, `\x1b[2J\u202e`) || len(got) > maxReportText {
		t.Errorf("lost reason %q: a control character, not escaped, or longer than %d bytes", got, maxReportText)
	}
}

// An event lists at most MaxListedInstances instances, instance 0 and
// the lost ones first, so that a run of thousands stays within
// MaxEventSize and a lost instance is never left out.
func TestManyInstancesListTheLostFirst(t *testing.T) {
	in := NewInstances(10_000)
	for _, i := range []int{9_999, 4_242} {
		in.Lost(i, "connection closed")
	}
	list := in.list(time.Now(), time.Now(), false)
	if len(list) != MaxListedInstances || list[0].Index != 0 || list[1].Index != 4_242 || list[2].Index != 9_999 || list[3].Index != 1 {
		t.Fatalf("%d instances listed, the first %+v", len(list), list[:4])
	}
	c := NewCollector(time.Now(), chatProgress(1, 0), nil).WithInstances(in)
	if b, err := encodeEvent(c.Next(time.Now())); err != nil || len(b) > MaxEventSize {
		t.Errorf("the event of 10,000 instances: %d bytes (%v), at most %d", len(b), err, MaxEventSize)
	}
}

// The run's last event lists instance 0 itself done, not running; and
// each instance's health line is its collector's reading (the one probe
// an instance has), measured once healthWindow has passed.
func TestLastEventListsInstance0Done(t *testing.T) {
	in := NewInstances(2)
	start := time.Now()
	own := NewCollector(start, chatProgress(1, 0), nil).WithInstances(in)
	peer := NewReporter(chatProgress(1, 0))
	if err := in.Received(1, peer.report(start, false)); err != nil {
		t.Fatal(err)
	}
	ev := own.Next(start)
	if got := ev.Instances; got[0].State != InstanceRunning || got[0].Health != "not measured yet" || got[1].Health != "not measured yet" {
		t.Errorf("before any health reading: %+v, want instance 0 running, both not measured yet", got)
	}
	later := time.Now().Add(healthWindow) // the probes started at NewCollector and NewReporter
	if err := in.Received(1, peer.report(later, true)); err != nil {
		t.Fatal(err)
	}
	last := own.Last(later)
	if !last.Done {
		t.Error("the last event is not marked done")
	}
	for i, inst := range last.Instances {
		if inst.State != InstanceDone || inst.Health == "not measured yet" {
			t.Errorf("instance %d in the last event: %+v, want done, its health measured", i, inst)
		}
	}
}

// A report's histogram whose header claims a wider geometry than
// llmrun's is refused before it is decoded: 60 bytes of it would make the
// decoder allocate 45 MB of counts, once on each peer's goroutine at once.
func TestReportOfAWideHistogramIsRefusedBeforeItIsDecoded(t *testing.T) {
	wide := hdr.New(1, math.MaxInt64/4, 5)
	wide.RecordValue(1)
	msg := `{"scenarios":[{"name":"chat","requests":1,"ttft":{"min":0.001,"max":0.001,"hdr":"` + summary.EncodeHDR(wide) + `"}}],"health":{}}`
	in := NewInstances(2)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := in.Received(1, []byte(msg))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "with 5 significant figures, want 1..3600000000 with 3") {
		t.Errorf("error %v, want the histogram's geometry refused", err)
	}
	if took := after.TotalAlloc - before.TotalAlloc; took > 4<<20 {
		t.Errorf("refusing a %d-byte report allocated %d MB, want less than 4", len(msg), took>>20)
	}
}
