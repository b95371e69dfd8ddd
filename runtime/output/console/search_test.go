package console_test

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/summary"
)

// A search's summary says each level's own verdict, inconclusive
// included, in the levels' table too, and writes a share's value, bound
// and interval alike, as percentages.
func TestRenderSearchWords(t *testing.T) {
	lo, hi := 0.985, 0.9996
	s := &summary.Summary{SchemaVersion: summary.SchemaVersion,
		Scenarios: []summary.ScenarioSummary{{Name: "search@4"}, {Name: "search@8"}},
		Capacity: &summary.Capacity{Variable: "rate", SLO: summary.SLO{TTFTP99: 500},
			Levels: []summary.CapacityLevel{{Scenario: "search@4", Level: 4, MeetsSLO: true}, {Scenario: "search@8", Level: 8}},
			Search: &summary.CapacitySearch{Variable: "rate", Low: 4, Confidence: 0.95, Stop: "the time budget (1m0s) ended before the next level",
				Levels: []summary.SearchLevel{
					{Level: 4, Verdict: "met", Figure: "ttft_p99", Value: 100, Bound: 500},
					{Level: 8, Verdict: "inconclusive", Figure: "goodput_share", Value: 0.995, Lo: &lo, Hi: &hi, Bound: 0.99},
				}}}}
	out := ansi.ReplaceAllString(render(t, s, false), "")
	var levelRow, searchRow string
	for line := range strings.SplitSeq(out, "\n") {
		switch {
		case strings.Contains(line, "search@8"):
			levelRow = line
		case strings.Contains(line, "goodput_share"):
			searchRow = line
		}
	}
	if !strings.HasSuffix(strings.TrimSuffix(strings.TrimSpace(levelRow), "│"), "inconclusive ") {
		t.Errorf("the levels' table says %q of level 8: want inconclusive, the search's verdict\n%s", levelRow, out)
	}
	for _, want := range []string{"99.50 %", "[98.50 %, 99.96 %]", "99.00 %"} {
		if !strings.Contains(searchRow, want) {
			t.Errorf("the search's row of level 8 is %q: want %q", searchRow, want)
		}
	}
}

// A search's capacity names its variable, as its levels do, and a
// latency's value, interval and bound carry their unit.
func TestRenderSearchUnits(t *testing.T) {
	lo, hi := 80.0, 120.0
	s := &summary.Summary{SchemaVersion: summary.SchemaVersion,
		Scenarios: []summary.ScenarioSummary{{Name: "search@4"}, {Name: "search@8"}},
		Capacity: &summary.Capacity{Variable: "rate", SLO: summary.SLO{TTFTP99: 500},
			Search: &summary.CapacitySearch{Variable: "rate", Low: 4, High: 8, Estimate: 5.657, Confidence: 0.95, Stop: "bracketed",
				Levels: []summary.SearchLevel{
					{Level: 4, Verdict: "met", Figure: "ttft_p99", Value: 100, Lo: &lo, Hi: &hi, Bound: 500},
					{Level: 8, Verdict: "missed", Figure: "ttft_p99", Value: 900, Bound: 500},
				}}}}
	out := ansi.ReplaceAllString(render(t, s, false), "")
	if !strings.Contains(out, "capacity ........... rate 5.66: rate 4 met the SLO") {
		t.Errorf("the capacity line does not name the variable of its estimate:\n%s", out)
	}
	var row string
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "ttft_p99") && strings.Contains(line, "met") {
			row = line
		}
	}
	for _, want := range []string{"100.0 ms", "[80.0 ms, 120.0 ms]", "500.0 ms"} {
		if !strings.Contains(row, want) {
			t.Errorf("the search's row of level 4 is %q: want %q", row, want)
		}
	}
}
