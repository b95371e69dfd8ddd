package influxdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/modules/metrics"
)

// Requests with the same time and tags all land: each point of a series
// comes 1 ns after the one before it, so none overwrites another.
func testUniqueTimes(t *testing.T, s *influxtest.Server) {
	run := testRun(t)
	o := New(testConfig(s))
	if err := o.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	at := run.Start.Add(time.Second)
	const n = 1000
	for range n {
		o.AddRequest(okRecord("chat", at))
	}
	// Tags that differ from the others' only once merged with the run's
	// (the same testid) are the same series.
	same := okRecord("chat", at)
	same.Tags = same.Tags.Merge(metrics.NewTagSet(map[string]string{"testid": "chat"}))
	o.AddRequest(same)
	rep := o.Finish(context.Background(), nil)
	if rep.Dropped != 0 {
		t.Fatalf("report %+v", rep)
	}
	rows := selectRows(t, s, fmt.Sprintf(`SELECT * FROM llm_request WHERE run_id='%s'`, run.ID))
	if len(rows) != n+1 {
		t.Fatalf("%d points stored, want %d", len(rows), n+1)
	}
	for i, r := range rows {
		want := at.Add(time.Duration(i)).UTC().Format(time.RFC3339Nano)
		if r["time"] != want {
			t.Fatalf("point %d at %v, want %s", i, r["time"], want)
		}
	}
}

// The ticker writes an llm_interval point per scenario with requests and
// an _all point with active_vus every interval, and one more at the end;
// together they count every request once.
func testIntervals(t *testing.T, s *influxtest.Server) {
	run := testRun(t)
	cfg := testConfig(s)
	cfg.Interval, cfg.Requests = time.Second, false
	o := startOutput(t, cfg, run)
	begin := time.Now()
	const n = 25
	for i := range n {
		o.AddRequest(okRecord("chat", time.Now()))
		if i%2 == 0 {
			o.AddRequest(okRecord("batch", time.Now()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	rep := o.Finish(context.Background(), nil)
	ticks := int(time.Since(begin) / time.Second)
	if rep.Dropped != 0 {
		t.Fatalf("report %+v", rep)
	}
	requests := map[string]float64{}
	points := map[string]int{}
	for _, r := range selectRows(t, s, fmt.Sprintf(`SELECT * FROM llm_interval WHERE run_id='%s'`, run.ID)) {
		sc := r["scenario"].(string)
		requests[sc] += r["requests"].(float64)
		points[sc]++
		if (sc == allScenarios) != (r["active_vus"] != nil) {
			t.Errorf("active_vus %v on a point of %s", r["active_vus"], sc)
		}
	}
	if want := map[string]float64{"chat": n, "batch": (n + 1) / 2, allScenarios: n + (n+1)/2}; fmt.Sprint(requests) != fmt.Sprint(want) {
		t.Errorf("requests by scenario %v, want %v", requests, want)
	}
	if points[allScenarios] < 3 || points[allScenarios] > ticks+1 {
		t.Errorf("%d _all points over %d whole seconds at 1s intervals, want one a second and one at the end", points[allScenarios], ticks)
	}
	if rep.Written != int64(1+points["chat"]+points["batch"]+points[allScenarios]) {
		t.Errorf("report %+v, stored %v", rep, points)
	}
}
