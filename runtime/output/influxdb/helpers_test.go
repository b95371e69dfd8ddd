package influxdb

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
)

// testConfig is a configuration for the server, with an interval long
// enough that only Finish's partial interval happens in a test.
func testConfig(s *influxtest.Server) Config {
	return Config{URL: s.URL, Bucket: s.Bucket, Token: s.Token, Interval: time.Minute, Buffer: 10_000, Batch: 500,
		FlushTimeout: 10 * time.Second, Requests: true}
}

// testRun is a run with an ID unique to the test.
func testRun(t testing.TB) output.Run {
	return output.Run{ID: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), TestID: "chat", Tags: map[string]string{"env": "ci"},
		Start: time.Now().Add(-time.Minute).Truncate(time.Millisecond), Progress: func() engine.Progress { return engine.Progress{ActiveVUs: 3, MaxVUs: 8} }}
}

// row is one point read back: its columns by name, absent ones nil;
// numbers are float64, time a string.
type row map[string]any

// selectRows runs an InfluxQL statement and returns the rows of its first
// statement, across its series (with their GROUP BY tags as columns).
func selectRows(t testing.TB, s *influxtest.Server, stmt string) []row {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := s.InfluxQL(ctx, stmt)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Results []struct {
			Series []struct {
				Name    string            `json:"name"`
				Tags    map[string]string `json:"tags"`
				Columns []string          `json:"columns"`
				Values  [][]any           `json:"values"`
			} `json:"series"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var rows []row
	if len(resp.Results) == 0 {
		return rows
	}
	for _, se := range resp.Results[0].Series {
		for _, vs := range se.Values {
			rw := row{}
			for k, v := range se.Tags {
				rw[k] = v
			}
			for i, c := range se.Columns {
				if vs[i] != nil {
					rw[c] = vs[i]
				}
			}
			rows = append(rows, rw)
		}
	}
	return rows
}

// countPoints returns how many points of a measurement (a name, or
// "db"."rp"."name") the run has.
func countPoints(t testing.TB, s *influxtest.Server, measurement, runID string) int {
	t.Helper()
	return len(selectRows(t, s, fmt.Sprintf(`SELECT * FROM %s WHERE run_id='%s'`, measurement, runID)))
}

// okRecord is a completed request of the scenario, ended at at.
func okRecord(scenario string, at time.Time) *llm.Record {
	return &llm.Record{Time: at, Tags: metrics.NewTagSet(map[string]string{"scenario": scenario, "model": "m1"}), OK: true, Status: 200,
		TTFT: 120, TTFO: 130, TPOT: 12.5, E2E: 1500, ITLMean: 12, ITLP99: 30, OutputTokens: 100, PromptTokens: 500, CachedTokens: 64, ReasoningTokens: 10}
}

// TestOutput runs the tests that share a server, in parallel.
func TestOutput(t *testing.T) {
	t.Parallel()
	s := influxtest.Start(t)
	tests := []struct {
		name string
		test func(*testing.T, *influxtest.Server)
	}{
		{"schema", testSchema},
		{"start errors", testStartErrors},
		{"unique times", testUniqueTimes},
		{"intervals", testIntervals},
		{"intervals of a streaming request", testIntervalsOfAStreamingRequest},
		{"rejected", testRejected},
		{"influxql quoting", testInfluxQLQuoting},
		{"server section", testServerSection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, s)
		})
	}
}

// startOutput makes and starts an output for run, failing the test when it
// does not start.
func startOutput(t testing.TB, cfg Config, run output.Run) *Output {
	t.Helper()
	o := New(cfg)
	if err := o.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return o
}
