package summary_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// decodeJSON is the value of raw JSON, for comparing what an encoder
// rewrote (indented, HTML-escaped).
func decodeJSON(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A result written and read back is the same, and the percentiles computed
// again from its histograms are the ones it states.
func TestReadJSONRoundTrip(t *testing.T) {
	meta := summarytest.Meta
	meta.Options = json.RawMessage(`{"vus": 4, "thresholds": {"llm_ttft": ["p(95)<500"]}}`)
	s := summarize.Build(summarytest.TwoScenarioReport(t), meta)
	back, err := summary.ReadJSON(summarytest.WriteResult(t, s))
	if err != nil {
		t.Fatal(err)
	}
	// The encoder re-indents and escapes the options; they mean the same.
	if got, want := decodeJSON(t, back.Meta.Options), decodeJSON(t, s.Meta.Options); !reflect.DeepEqual(got, want) {
		t.Errorf("options %s, want %s", back.Meta.Options, s.Meta.Options)
	}
	back.Meta.Options, s.Meta.Options = nil, nil
	if !reflect.DeepEqual(back, s) {
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(back)
		t.Fatalf("round trip changed the summary:\nbefore %s\nafter  %s", a, b)
	}

	type block struct {
		name    string
		rows    []summary.LatencyRow
		metrics map[string]summary.MetricSummary
	}
	blocks := []block{{"whole run", back.Latency, back.Metrics}}
	for _, sc := range back.Scenarios {
		blocks = append(blocks, block{"scenario " + sc.Name, sc.Latency, sc.Metrics})
	}
	for _, b := range blocks {
		if len(b.rows) != 5 {
			t.Errorf("%s: %d latency rows, want 5", b.name, len(b.rows))
		}
		for _, row := range b.rows {
			h := b.metrics[row.Metric].Histogram
			if h == nil {
				t.Errorf("%s: %s has no histogram", b.name, row.Metric)
				continue
			}
			st, err := h.Stats()
			if err != nil {
				t.Fatalf("%s: %s: %v", b.name, row.Metric, err)
			}
			if st.Count != row.Count || st.Min != row.Min || st.Max != row.Max || st.Mean() != row.Mean {
				t.Errorf("%s: %s decoded count/min/max/mean %d/%g/%g/%g, row %+v", b.name, row.Metric, st.Count, st.Min, st.Max, st.Mean(), row)
			}
			for _, p := range summary.Percentiles {
				if got, want := st.Percentile(p), row.P[fmt.Sprintf("p%g", p)]; got != want {
					t.Errorf("%s: %s p%g from the decoded histogram %g, the file says %g", b.name, row.Metric, p, got, want)
				}
			}
		}
		// Every trend's values follow from its histogram.
		for name, m := range b.metrics {
			if (m.Type == "trend") != (m.Histogram != nil) {
				t.Errorf("%s: %s, a %s, histogram %v", b.name, name, m.Type, m.Histogram)
			}
			if m.Histogram == nil {
				continue
			}
			st, err := m.Histogram.Stats()
			if err != nil {
				t.Fatalf("%s: %s: %v", b.name, name, err)
			}
			if got := summary.Values(st, 0); !reflect.DeepEqual(got, m.Values) {
				t.Errorf("%s: %s values from the histogram %v, the file says %v", b.name, name, got, m.Values)
			}
		}
	}
}

func TestReadJSONErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		want          string
	}{
		{"missing.json", "", "no such file"},
		{"text.json", "not json", "text.json:1:2: not valid JSON: invalid character 'o'"},
		{"other.json", `{"hello": 1}`, "not an llmrun result file: no schema_version"},
		{"v1.json", `{"schema_version": 1, "serving": {}}`, "schema_version 1, from an older llmrun"},
		{"v9.json", `{"schema_version": 9}`, "schema_version 9, from a newer llmrun"},
		{"bad.json", `{"schema_version": 2, "meta": {},` + "\n" + `"serving": 5}`, "bad.json:2:12: serving: want an object, got number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if tc.content != "" {
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := summary.ReadJSON(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want one naming %s and saying %q", err, path, tc.want)
			}
		})
	}
}

// The headline holds vLLM's keys, with the figures of the serving block
// and of the latency rows.
func TestHeadline(t *testing.T) {
	s := summarize.Build(summarytest.TwoScenarioReport(t), summarytest.Meta)
	if _, ok := s.Serving.Headline["request_goodput"]; ok {
		t.Errorf("request_goodput in the headline of a run without goodput bounds")
	}
	s.Serving.SetGoodput(summary.GoodputBounds{TTFT: 50}, 4, 10)
	h := s.Serving.Headline
	keys := slices.Sorted(maps.Keys(h))
	if want := slices.Sorted(slices.Values(summary.HeadlineKeys())); !slices.Equal(keys, want) {
		t.Errorf("headline keys %v, want %v", keys, want)
	}
	row := func(metric string) summary.LatencyRow {
		for _, r := range s.Latency {
			if r.Metric == metric {
				return r
			}
		}
		t.Fatalf("no %s row", metric)
		return summary.LatencyRow{}
	}
	ttft, itl, e2e := row("llm_ttft"), row("llm_itl"), row("llm_e2e")
	// TTFT 10, 20, ..., 80, 200, 200: mean 76, E[x²] 10040.
	// ITL 24×5 and 4×10.
	itlMean := 160.0 / 28
	want := map[string]float64{
		"duration": 10, "completed": 10, "total_input_tokens": 960, "total_output_tokens": 900,
		"request_throughput": 1, "request_goodput": 0.4, "output_throughput": 90, "total_token_throughput": 186,
		"mean_ttft_ms": 76, "median_ttft_ms": ttft.P["p50"], "std_ttft_ms": math.Sqrt(10040 - 76*76),
		"p90_ttft_ms": ttft.P["p90"], "p95_ttft_ms": ttft.P["p95"], "p99_ttft_ms": ttft.P["p99"],
		"mean_itl_ms": itlMean, "std_itl_ms": math.Sqrt(1000.0/28 - itlMean*itlMean), "p99_itl_ms": itl.P["p99"],
		"mean_e2el_ms": e2e.Mean, "median_e2el_ms": e2e.P["p50"], "p90_e2el_ms": e2e.P["p90"],
	}
	for k, w := range want {
		if !summarytest.Near(h[k], w) {
			t.Errorf("%s = %v, want %v", k, h[k], w)
		}
	}
	if h["p90_ttft_ms"] != 200 || !summarytest.NearHDR(h["median_ttft_ms"], 50) {
		t.Errorf("ttft p90 %v median %v, want 200 and 50", h["p90_ttft_ms"], h["median_ttft_ms"])
	}
	// Each scenario has its own.
	for _, sc := range s.Scenarios {
		if sc.Serving.Headline["completed"] != float64(sc.Serving.OK) || sc.Serving.Headline["duration"] != sc.Serving.DurationSeconds {
			t.Errorf("scenario %s headline %v, serving %+v", sc.Name, sc.Serving.Headline, sc.Serving)
		}
	}
}
