package influxdb

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/runtime/engine"
)

// fields returns a point's tags and fields by name.
func fields(p *write.Point) map[string]any {
	out := map[string]any{}
	for _, tag := range p.TagList() {
		out[tag.Key] = tag.Value
	}
	for _, f := range p.FieldList() {
		out[f.Key] = f.Value
	}
	return out
}

// The llm_interval points' output tokens are those that arrived in the
// interval, by scenario: a scenario whose request is still streaming has
// a point, with its tokens and no request; when the request ends, the
// next interval has the tokens that arrived since, and its prompt tokens
// join them in total_tok_per_s.
func TestIntervalCountsTokensAsTheyArrive(t *testing.T) {
	a := newAggregates()
	var arr arrivals
	start := time.Now()
	tick := func(counts ...engine.TokenCount) map[string]map[string]any {
		end := start.Add(2 * time.Second)
		out := map[string]map[string]any{}
		for _, p := range a.interval(runTags{id: "r"}, start, end, 1, arr.since(counts)) {
			f := fields(p)
			out[f["scenario"].(string)] = f
		}
		start = end
		return out
	}
	inFlight := tick(engine.TokenCount{Scenario: "chat", Model: "m1", Tokens: 40}, engine.TokenCount{Scenario: "chat", Model: "m2", Tokens: 10})
	rec := okRecord("chat", time.Now())
	a.add(rec)
	ended := tick(engine.TokenCount{Scenario: "chat", Model: "m1", Tokens: 100}, engine.TokenCount{Scenario: "chat", Model: "m2", Tokens: 10})
	idle := tick(engine.TokenCount{Scenario: "chat", Model: "m1", Tokens: 100}, engine.TokenCount{Scenario: "chat", Model: "m2", Tokens: 10})

	tests := []struct {
		name             string
		points           map[string]map[string]any
		scenario         string
		requests         int64
		outTok, totalTok float64
	}{
		{"in flight", inFlight, "chat", 0, 25, 25},
		{"in flight", inFlight, allScenarios, 0, 25, 25},
		{"ended", ended, "chat", 1, 30, 30 + 250},
		{"ended", ended, allScenarios, 1, 30, 30 + 250},
		{"idle", idle, allScenarios, 0, 0, 0},
	}
	for _, tt := range tests {
		p := tt.points[tt.scenario]
		if p == nil {
			t.Errorf("%s: no point of %s in %v", tt.name, tt.scenario, tt.points)
			continue
		}
		if p["requests"] != tt.requests || p["output_tok_per_s"] != tt.outTok || p["total_tok_per_s"] != tt.totalTok {
			t.Errorf("%s, %s: %d requests, %v output and %v total tok/s; want %d, %g and %g",
				tt.name, tt.scenario, p["requests"], p["output_tok_per_s"], p["total_tok_per_s"], tt.requests, tt.outTok, tt.totalTok)
		}
	}
	if len(idle) != 1 {
		t.Errorf("an interval without requests nor tokens has points %v, want _all's only", idle)
	}
}

// A run whose only request is still streaming stores llm_interval points
// with its output tokens: the scenario's and _all's, with no request.
func testIntervalsOfAStreamingRequest(t *testing.T, s *influxtest.Server) {
	run := testRun(t)
	var mu sync.Mutex
	tokens := int64(0)
	run.Progress = func() engine.Progress {
		mu.Lock()
		defer mu.Unlock()
		return engine.Progress{ActiveVUs: 1, MaxVUs: 1, Arrived: []engine.TokenCount{{Scenario: "chat", Model: "m1", Tokens: tokens}}}
	}
	cfg := testConfig(s)
	cfg.Requests = false
	o := startOutput(t, cfg, run)
	mu.Lock()
	tokens = 48
	mu.Unlock()
	if rep := o.Finish(context.Background(), nil); rep.Dropped != 0 || rep.Err != "" {
		t.Fatalf("report %+v", rep)
	}
	rows := selectRows(t, s, fmt.Sprintf(`SELECT * FROM llm_interval WHERE run_id='%s'`, run.ID))
	if len(rows) != 2 {
		t.Fatalf("%d llm_interval points, want chat's and _all's: %v", len(rows), rows)
	}
	for _, r := range rows {
		out, _ := r["output_tok_per_s"].(float64)
		if r["requests"] != 0.0 || !(out > 0) || math.Abs(r["total_tok_per_s"].(float64)-out) > 1e-9 {
			t.Errorf("%s: %v requests, %v output tok/s, %v total tok/s; want none, more than 0, the same", r["scenario"], r["requests"], out, r["total_tok_per_s"])
		}
	}
}
