package influxdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summarize"
)

// WriteTestRun stores on s what llmrun run --testid testid --tag env=ci
// stores, through the Output: the points of a run of two scenarios (chat
// and batch, testSummary's, with summarytest.ServerTargets' server
// section) and their requests (testRecords), started at start; it returns
// the run's id.
func WriteTestRun(t *testing.T, s *influxtest.Server, testid string, start time.Time) string {
	t.Helper()
	run := output.Run{ID: fmt.Sprintf("%s-%s-%d", t.Name(), testid, start.UnixNano()), TestID: testid, Tags: map[string]string{"env": "ci"}, Start: start,
		Progress: func() engine.Progress { return engine.Progress{ActiveVUs: 3, MaxVUs: 8} }}
	o := startOutput(t, testConfig(s), run)
	records := testRecords(start.Add(time.Second))
	for i := range records {
		o.AddRequest(&records[i])
	}
	sum := testSummary(start)
	summarize.AttachServer(sum, summarytest.ServerTargets(3))
	if rep := o.Finish(context.Background(), sum); rep.Dropped != 0 || rep.Err != "" {
		t.Fatalf("writing the run: %+v", rep)
	}
	return run.ID
}
