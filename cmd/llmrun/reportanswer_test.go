package main

import (
	"context"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/summary"
)

// foldHeight is the height of a 1280×900 window: what a reader sees of
// a report before scrolling.
const foldHeight = 900

// mixedScript is two workloads at once, each at its own arrival rate
// (constant-vus scenarios of different VUs would read as a concurrency
// sweep), each with its own threshold: the chat one met, the rag one
// (TTFT under a microsecond) failed; every scenario warms up for a
// second first.
const mixedScript = `
import llm from 'llm';
export const options = {
  warmup: '1s',
  scenarios: {
    chat: { executor: 'constant-arrival-rate', rate: 10, duration: '3s', preAllocatedVUs: 4, exec: 'chat' },
    rag: { executor: 'constant-arrival-rate', rate: 4, duration: '3s', preAllocatedVUs: 4, exec: 'rag' },
  },
  thresholds: {
    'llm_ttft{scenario:chat}': ['p(99) < 60000'],
    'llm_ttft{scenario:rag}': ['p(99) < 0.001'],
  },
};
export function chat() {
  llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, ignore_eos: true });
}
export function rag() {
  llm.stream({ messages: [{ role: 'user', content: 'context '.repeat(200) }], max_tokens: 4, ignore_eos: true });
}
`

// reportOf writes the HTML report of a result file with llmrun report,
// extra flags added, and returns the page.
func reportOf(t *testing.T, result string, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	code, _, stderr := command(t, "report", append([]string{result, "-o", out}, flags...)...)
	if code != exitcode.OK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

// inOrder checks that the page has each of marks, in that order.
func inOrder(t *testing.T, page string, marks ...string) {
	t.Helper()
	last := -1
	for i, m := range marks {
		at := strings.Index(page, m)
		if at < 0 {
			t.Errorf("the page has no %s", m)
			continue
		}
		if at < last {
			t.Errorf("%s comes before %s, want after", m, marks[i-1])
		}
		last = at
	}
}

// aboveTheFold lays the page out in Chromium, 1280 px wide, and checks
// that each selector's first element ends within the first foldHeight px.
func aboveTheFold(t *testing.T, page string, selectors ...string) {
	t.Helper()
	boxes := browsertest.Boxes(t, browsertest.Chromium(t), page, 1280, selectors...)
	for _, sel := range selectors {
		if len(boxes[sel]) == 0 {
			t.Errorf("no %s on the laid-out page", sel)
			continue
		}
		if b := boxes[sel][0]; b.Top+b.Height > foldHeight {
			t.Errorf("%s spans y %.0f to %.0f: below the fold (%d px)", sel, b.Top, b.Top+b.Height, foldHeight)
		}
	}
}

// labelsClearOfData lays the page out in Chromium and checks that in
// each chart the labels of the reference lines and of the marked points
// overlap none of its data dots.
func labelsClearOfData(t *testing.T, page string, charts ...string) {
	t.Helper()
	labelsOf := func(c string) string {
		return `svg[data-chart="` + c + `"] .ref text, svg[data-chart="` + c + `"] .mark text`
	}
	var selectors []string
	for _, c := range charts {
		selectors = append(selectors, labelsOf(c), `svg[data-chart="`+c+`"] circle.data`)
	}
	boxes := browsertest.Boxes(t, browsertest.Chromium(t), page, 1280, selectors...)
	for _, c := range charts {
		labels, dots := boxes[labelsOf(c)], boxes[`svg[data-chart="`+c+`"] circle.data`]
		if len(labels) == 0 || len(dots) == 0 {
			t.Errorf("chart %s: %d labels, %d dots laid out; want some of each", c, len(labels), len(dots))
		}
		for _, l := range labels {
			for _, d := range dots {
				if l.Left < d.Left+d.Width && d.Left < l.Left+l.Width && l.Top < d.Top+d.Height && d.Top < l.Top+l.Height {
					t.Errorf("chart %s: a label at (%.0f, %.0f) %.0f×%.0f covers a data point at (%.0f, %.0f)", c, l.Left, l.Top, l.Width, l.Height, d.Left, d.Top)
				}
			}
		}
	}
}

// A run of two scenarios with thresholds, one failed: its report says so
// first, then has the per-scenario table and a line per scenario in each
// distribution, all above the whole run's pooled figures, which say that
// they are pooled; its warmup is shaded on the time charts.
func TestReportOfAMixedRunLeadsWithItsAnswer(t *testing.T) {
	t.Parallel()
	sim := llmsimtest.Start(t, llmsimtest.Fast())
	result := filepath.Join(t.TempDir(), "mixed.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "--base-url", sim.URL(), "--slo", "ttft_p99=5000",
		"--summary-export", result, writeScript(t, "mixed.js", mixedScript))
	if code != exitcode.Thresholds {
		t.Fatalf("run: exit %d, want %d (a threshold failed)\nstdout:\n%s\nstderr:\n%s", code, exitcode.Thresholds, stdout, stderr)
	}
	s := readSummary(t, result)
	page := reportOf(t, result)

	inOrder(t, page, `id="thresholds"`, `id="threshold-verdict"`, `id="scenarios"`, `id="scenario-latency"`, `id="serving"`, `id="latency"`, `id="timeline"`)
	if want := "Failed: 1 of 2 thresholds not met: llm_ttft{scenario:rag} p(99) &lt; 0.001 (observed "; !strings.Contains(page, want) {
		t.Errorf("the verdict does not name the failed threshold: no %q", want)
	}
	if n := strings.Count(page, `<section id="thresholds">`); n != 1 {
		t.Errorf("the thresholds are shown %d times, want once", n)
	}
	for _, want := range []string{"Whole run: all scenarios pooled", "Latency distributions: all scenarios pooled", "Over time: all scenarios pooled"} {
		if !strings.Contains(page, want) {
			t.Errorf("the pooled figures are not labelled as pooled: no %q", want)
		}
	}
	// A line per scenario, named in the legend, in each distribution.
	for _, metric := range []string{"ttft", "tpot", "itl", "e2e"} {
		chart := svgOf(t, page, "scenario-latency-"+metric)
		for _, sc := range []string{"chat", "rag"} {
			if !strings.Contains(chart, `text-anchor="start">`+sc+`</text>`) {
				t.Errorf("scenario-latency-%s has no legend for %s", metric, sc)
			}
		}
		if n := strings.Count(chart, `<path class="data line`); n != 2 {
			t.Errorf("scenario-latency-%s draws %d lines, want one per scenario", metric, n)
		}
	}
	// The duration is printed once.
	if !regexp.MustCompile(`<dt>duration</dt><dd>[0-9.hms]+</dd>`).MatchString(page) {
		t.Errorf("the header's duration is not one figure: %s", regexp.MustCompile(`<dt>duration</dt><dd>[^<]*</dd>`).FindString(page))
	}
	checkWarmupBand(t, page, s)

	// The first scenario's row at least: warnings of a loaded machine may
	// push the rest down.
	aboveTheFold(t, page, "#threshold-verdict", `#thresholds table`, "#scenarios tr:nth-child(2)")
	labelsClearOfData(t, page, "latency-ttft", "scenario-latency-ttft", "time-latency")
}

// svgOf is the SVG of the named chart in the page.
func svgOf(t *testing.T, page, name string) string {
	t.Helper()
	i := strings.Index(page, `data-chart="`+name+`"`)
	if i < 0 {
		t.Fatalf("the page has no chart %s", name)
	}
	return page[i : i+strings.Index(page[i:], "</svg>")]
}

// checkWarmupBand checks that the time charts shade the warmup: from the
// time axis' 0 to where the measured window starts (the timeline's end
// less the window's length), labelled as not measured.
func checkWarmupBand(t *testing.T, page string, s *summary.Summary) {
	t.Helper()
	if s.Serving.WarmupIterations == 0 {
		t.Fatalf("the run had no warmup iteration: %+v", s.Serving)
	}
	from := s.Timeline[len(s.Timeline)-1].T - s.Meta.End.Sub(s.Meta.Start).Seconds()
	if from < 1 {
		t.Fatalf("the measured window starts %.2f s into the timeline, before the 1 s warmup ended", from)
	}
	for _, name := range []string{"time-throughput", "time-requests", "time-latency", "time-load"} {
		chart := svgOf(t, page, name)
		band := regexp.MustCompile(`<g class="band" data-mark="warmup"><rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`).FindStringSubmatch(chart)
		if band == nil || !strings.Contains(chart, "warmup: not measured") {
			t.Errorf("%s does not shade the warmup", name)
			continue
		}
		// The x axis is linear: its ticks give the pixel of a second.
		ticks := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle">([0-9.]+)</text>`).FindAllStringSubmatch(chart, 2)
		if len(ticks) < 2 {
			t.Fatalf("%s: no two x ticks in %s", name, chart)
		}
		x0, t0, x1, t1 := num(t, ticks[0][1]), num(t, ticks[0][2]), num(t, ticks[1][1]), num(t, ticks[1][2])
		left, width := num(t, band[1]), num(t, band[2])
		want := x0 + (from-t0)*(x1-x0)/(t1-t0)
		if left != x0 || width < 1 || left+width < want-0.2 || left+width > want+0.2 {
			t.Errorf("%s: the warmup band spans x %.1f to %.1f, want %.1f (0 s) to %.1f (%.2f s)", name, left, left+width, x0, want, from)
		}
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The report of an llmrun bench run leads with vLLM's result block, its
// counts, throughputs and means those of the result's vLLM headline, as
// vllm bench serve prints them, above the fold; the whole-run throughputs are not repeated.
func TestReportOfABenchRunLeadsWithVLLMsFigures(t *testing.T) {
	t.Parallel()
	sim := llmsimtest.Start(t, llmsimtest.Fast())
	result := filepath.Join(t.TempDir(), "bench.json")
	code, stdout, stderr := command(t, "bench", "--base-url", sim.URL(), "--backend", "vllm", "--num-prompts", "20", "--request-rate", "100",
		"--random-input-len", "32", "--random-output-len", "8", "--no-preflight", "-q", "--summary-export", result)
	if code != exitcode.OK {
		t.Fatalf("bench: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	h := readSummary(t, result).Serving.Headline
	page := reportOf(t, result)
	inOrder(t, page, `id="bench"`, `id="serving"`)
	for _, f := range []struct{ label, key string }{
		{"Request throughput (req/s)", "request_throughput"}, {"Output token throughput (tok/s)", "output_throughput"},
		{"Total token throughput (tok/s)", "total_token_throughput"}, {"Benchmark duration (s)", "duration"},
	} {
		if want := fmt.Sprintf(`<span class="label">%s</span><span class="value">%.2f</span>`, f.label, h[f.key]); !strings.Contains(page, want) {
			t.Errorf("the bench block lacks %s", want)
		}
	}
	for _, l := range []struct{ label, key string }{{"TTFT", "ttft"}, {"TPOT", "tpot"}, {"ITL", "itl"}, {"E2EL", "e2el"}} {
		// Its median and percentiles are vLLM's, as the console printed
		// them (TestReportOfABenchRunShowsItsPercentiles).
		want := fmt.Sprintf(`<td>%s</td><td class="num">%.2f</td>`, l.label, h["mean_"+l.key+"_ms"])
		if !strings.Contains(page, want) {
			t.Errorf("the bench block lacks the row %s", want)
		}
	}
	for _, twice := range []string{`<span class="label">output throughput</span>`, `<span class="label">request throughput</span>`, "<dt>duration</dt>"} {
		if strings.Contains(page, twice) {
			t.Errorf("the page repeats a figure of the bench block: %s", twice)
		}
	}
	aboveTheFold(t, page, "#bench .headline", "#bench table")
}

// A capacity search's report leads with the capacity: its bracket, why
// the search stopped, and its width, confidence and time above the fold
// of a 1280×900 window; then the levels in the order tried, charted with
// their labels off the data, then the levels as a sweep's, then the
// pooled figures. The search runs short levels against the simulator
// (16 slots of 5 steps of 40 ms: 80 requests a second), judged on 50 %
// intervals, so that a few levels bracket the capacity within ±30 %.
func TestReportOfACapacitySearchLeadsWithItsCapacity(t *testing.T) {
	t.Parallel()
	cfg := llmsim.DefaultConfig()
	cfg.MaxNumSeqs = 16
	cfg.PrefillBase, cfg.PrefillPerToken = 0, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 40*time.Millisecond, 0
	cfg.Tokenizer = llmsim.TokenizerBytes
	url := startSim(t, cfg)
	result := filepath.Join(t.TempDir(), "search.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--base-url", url,
		"-e", "VARIABLE=rate", "-e", "ARRIVAL=constant", "-e", "START=40", "-e", "MAX=160", "-e", "STEP=2s", "-e", "WIDTH=0.3",
		"-e", "CONFIDENCE=0.5", "-e", "BUDGET=1m", "-e", "INPUT_TOKENS=8", "-e", "OUTPUT_TOKENS=6", "-e", "SLO_TTFT_P99=500",
		"--summary-export", result, "stock:capacity-search")
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	s := readSummary(t, result)
	if s.Capacity == nil || s.Capacity.Search == nil || len(s.Capacity.Search.Levels) == 0 {
		t.Fatalf("no capacity search in the result:\n%s", stdout)
	}
	sr := s.Capacity.Search
	page := reportOf(t, result)

	inOrder(t, page, `id="search"`, `id="search-verdict"`, `data-chart="search-levels"`, `id="search-levels"`, `id="capacity"`, `id="serving"`)
	if !strings.Contains(page, "<p>Stopped: "+html.EscapeString(sr.Stop)+".</p>") {
		t.Errorf("the page does not say why the search stopped (%q)", sr.Stop)
	}
	if sr.Low > 0 && sr.High > 0 {
		want := fmt.Sprintf("between %s, which met the SLO, and %s, which did not", strconv.FormatFloat(sr.Low, 'f', -1, 64), strconv.FormatFloat(sr.High, 'f', -1, 64))
		if !strings.Contains(page, want) {
			t.Errorf("the page does not give the bracket: no %q", want)
		}
	}
	if n := strings.Count(page, `<tr class="verdict-`); n != len(sr.Levels) {
		t.Errorf("the levels table has %d levels, want the %d tried", n, len(sr.Levels))
	}
	// The header names the first level's load, and how many more ran.
	if more := len(sr.Levels) - 1; more > 0 {
		last := "<li>search@" + strconv.FormatFloat(sr.Levels[more].Level, 'f', -1, 64) + ":"
		if !strings.Contains(page, fmt.Sprintf("then %d more level", more)) || strings.Contains(page, last) {
			t.Errorf("the header does not fold the levels after the first into a line: %s", regexp.MustCompile(`<ul class="shape">.*?</ul>`).FindString(page))
		}
	}
	aboveTheFold(t, page, "#search-verdict", "#search-facts")
	labelsClearOfData(t, page, "search-levels", "latency-throughput")
}

// The bench block of the report shows the percentiles the run asked for
// with --metric-percentiles, as the console printed them (within the
// histogram's 0.1 %, and the two decimals printed), not vLLM's default
// p99 alone; the result file keeps them.
func TestReportOfABenchRunShowsItsPercentiles(t *testing.T) {
	t.Parallel()
	sim := llmsimtest.Start(t, llmsimtest.Fast())
	result := filepath.Join(t.TempDir(), "bench.json")
	code, stdout, stderr := command(t, "bench", "--base-url", sim.URL(), "--backend", "vllm", "--num-prompts", "20", "--request-rate", "100",
		"--random-input-len", "32", "--random-output-len", "8", "--metric-percentiles", "50,90,99", "--percentile-metrics", "ttft,tpot,itl,e2el",
		"--no-preflight", "-q", "--summary-export", result)
	if code != exitcode.OK {
		t.Fatalf("bench: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, result); !slices.Equal(s.Meta.MetricPercentiles, []float64{50, 90, 99}) {
		t.Errorf("the result keeps metric_percentiles %v, want [50 90 99]", s.Meta.MetricPercentiles)
	}
	page := reportOf(t, result)
	if want := `<th>(ms)</th><th class="num">Mean</th><th class="num">Median</th><th class="num">P50</th><th class="num">P90</th><th class="num">P99</th>`; !strings.Contains(page, want) {
		t.Errorf("the bench block's header lacks %s", want)
	}
	block := page[strings.Index(page, `id="bench"`):]
	block = block[:strings.Index(block, "</section>")]
	printed := benchFigures(t, stdout)
	for _, name := range []string{"TTFT", "TPOT", "ITL", "E2EL"} {
		row := regexp.MustCompile(`<td>` + name + `</td>((?:<td class="num">[0-9.]+</td>){5})</tr>`).FindStringSubmatch(block)
		if row == nil {
			t.Errorf("the bench block has no row of 5 figures for %s", name)
			continue
		}
		cells := regexp.MustCompile(`>([0-9.]+)<`).FindAllStringSubmatch(row[1], -1)
		for i, stat := range []string{"Mean", "Median", "P50", "P90", "P99"} {
			want, ok := printed[stat+" "+name]
			if !ok {
				t.Fatalf("the console printed no %s %s:\n%s", stat, name, stdout)
			}
			if got := num(t, cells[i][1]); math.Abs(got-want) > 0.001*want+0.01 {
				t.Errorf("%s %s: the report shows %s, the console printed %.2f", stat, name, cells[i][1], want)
			}
		}
	}
}

// benchFigures are the latency figures vLLM's block printed, by their
// label: "P90 TTFT" is 4.43 of "P90 TTFT (ms):   4.43".
func benchFigures(t *testing.T, stdout string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range regexp.MustCompile(`(?m)^(\S+ \S+) \(ms\):\s+([0-9.]+)`).FindAllStringSubmatch(stdout, -1) {
		out[m[1]] = num(t, m[2])
	}
	return out
}
