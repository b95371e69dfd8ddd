package report

import (
	"fmt"
	"math"

	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// scenarioTimelineCharts draws each scenario over time, a line per
// scenario from its own timeline: output throughput, and TTFT p99 of the
// requests it completed in each interval, on the run's time axis with its
// warmup shaded. nil when no scenario has a timeline (a file written
// before scenarios had one).
func scenarioTimelineCharts(scenarios []summary.ScenarioSummary, slo summary.SLO, timeAxis axisSpec, warmup []band) []*Chart {
	var toks, ttft []series
	for _, sc := range scenarios {
		if len(sc.Timeline) == 0 {
			continue
		}
		var t, l []point
		for i, p := range sc.Timeline {
			// A point off the run's time axis (a hand-edited or
			// damaged file) is not drawn.
			if !(p.T >= timeAxis.Lo && p.T <= timeAxis.Hi) {
				continue
			}
			// An interval the scenario had nothing in is not in its
			// timeline: no line crosses the gap.
			if i > 0 && p.T-p.Seconds > sc.Timeline[i-1].T+1e-6 {
				gap := point{X: p.T - p.Seconds, Y: math.NaN()}
				t, l = append(t, gap), append(l, gap)
			}
			rate := math.NaN()
			if p.Seconds > 0 {
				rate = float64(p.OutputTokens) / p.Seconds
			}
			t = append(t, point{X: p.T, Y: rate, Tip: fmt.Sprintf("%s at %s s: %s output tok/s", sc.Name, textfmt.Num(p.T), textfmt.Num(rate))})
			lat := point{X: p.T, Y: math.NaN()}
			if p.TTFTP99 > 0 {
				lat = point{X: p.T, Y: p.TTFTP99, Tip: fmt.Sprintf("%s at %s s: TTFT p99 %s ms, p50 %s ms (%s)",
					sc.Name, textfmt.Num(p.T), textfmt.Millis(p.TTFTP99), textfmt.Millis(p.TTFTP50), textfmt.Count(p.Requests, "request"))}
			}
			l = append(l, lat)
		}
		toks = append(toks, series{Name: sc.Name, Points: t})
		ttft = append(ttft, series{Name: sc.Name, Points: l, Markers: true})
	}
	if len(toks) == 0 {
		return nil
	}
	const height = 240
	latency := chartSpec{
		Name: "scenario-time-ttft", Title: "TTFT p99 over time by scenario: of the requests each scenario completed in each interval",
		Width: wideWidth, Height: height, RightMargin: true, Legend: true,
		X: timeAxis, Y: axisSpec{Label: "TTFT p99 (ms)", Log: true, Zero: true},
		Series: ttft,
		Bands:  warmup,
		Empty:  "TTFT p99 over time by scenario: no request completed.",
	}
	if slo.TTFTP99 > 0 {
		latency.Refs = []refLine{sloLine(slo)}
	}
	return []*Chart{
		buildChart(chartSpec{
			Name: "scenario-time-throughput", Title: "Throughput over time by scenario: output tokens per second, counted as they arrived",
			Width: wideWidth, Height: height, RightMargin: true, Legend: true,
			X: timeAxis, Y: axisSpec{Label: "output tok/s", Zero: true},
			Series: toks,
			Bands:  warmup,
			Empty:  "Throughput over time by scenario: no interval.",
		}),
		buildChart(latency),
	}
}
