package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// serverNames are the charts of a server section's series.
var serverNames = []string{"server-queue", "server-kv-cache", "gpu-utilization", "gpu-power"}

// serverRun is steadyRun (a timeline of 120 one-second intervals) with
// summarytest.ServerTargets' server section, whose series have points at
// 1, 2, ... points seconds.
func serverRun(points int) *summary.Summary {
	s := steadyRun()
	summarize.AttachServer(s, summarytest.ServerTargets(points))
	return s
}

// xTicks are a chart's x-axis tick labels with their positions.
func xTicks(chart *html.Node) string {
	var ticks []string
	for _, txt := range findAll(chart, element("text")) {
		if a, _ := attr(txt, "text-anchor"); a == "middle" && txt.Parent != nil && hasClass(txt.Parent, "ticks") {
			x, _ := attr(txt, "x")
			ticks = append(ticks, x+"="+text(txt))
		}
	}
	return strings.Join(ticks, " ")
}

// line returns the points of a chart's line of series class (c0, c1, ...),
// failing t unless it has one line of one stretch.
func line(t *testing.T, chart *html.Node, class string) [][2]float64 {
	t.Helper()
	lines := findAll(chart, func(n *html.Node) bool { return element("path")(n) && hasClass(n, "data") && hasClass(n, class) })
	if len(lines) != 1 {
		t.Fatalf("%d lines of class %s", len(lines), class)
	}
	d, _ := attr(lines[0], "d")
	if strings.Count(d, "M") != 1 {
		t.Fatalf("line %q has gaps", d)
	}
	var pts [][2]float64
	for _, cmd := range strings.FieldsFunc(d, func(r rune) bool { return r == 'M' || r == 'L' }) {
		f := strings.Fields(cmd)
		x, errX := strconv.ParseFloat(f[0], 64)
		y, errY := strconv.ParseFloat(f[1], 64)
		if errX != nil || errY != nil {
			t.Fatalf("path %q: %v %v", d, errX, errY)
		}
		pts = append(pts, [2]float64{x, y})
	}
	return pts
}

// The server section's series are charts on the timeline's time axis:
// each scrape lands where the timeline's interval of the same time does,
// a series longer than the timeline stretches every chart's axis, and a
// fraction is drawn in percent from 0 to 100.
func TestServerChartsShareTheTimeAxis(t *testing.T) {
	const top, bottom, right = marginTop, 200 - marginBottom, wideWidth - marginRight2
	tests := []struct {
		name   string
		points int // of the server's series; the timeline has 120
	}{
		{"as long as the timeline", 120},
		{"scraped after the last request", 125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, doc := render(t, serverRun(tt.points))
			checkFinite(t, page)
			all := checkCharts(t, doc, slices.Concat(timelineNames, serverNames)...)
			if t.Failed() {
				t.FailNow()
			}
			var axes []string
			for _, name := range slices.Concat(timelineNames, serverNames) {
				axes = append(axes, name+": "+xTicks(all[name]))
			}
			for _, a := range axes[1:] {
				if _, ticks, _ := strings.Cut(a, ": "); ticks != strings.SplitN(axes[0], ": ", 2)[1] {
					t.Errorf("the charts' time axes differ:\n%s", strings.Join(axes, "\n"))
					break
				}
			}
			tokens := line(t, all["time-throughput"], "c0")
			for _, name := range serverNames {
				pts := line(t, all[name], "c0")
				if len(pts) != tt.points {
					t.Fatalf("%s: %d points, want %d", name, len(pts), tt.points)
				}
				// The scrape at t lands where the timeline's interval
				// ending at t does.
				for i := range min(len(pts), len(tokens)) {
					if pts[i][0] != tokens[i][0] {
						t.Fatalf("%s: the scrape at %d s is at x %v, the timeline's interval at %v", name, i+1, pts[i][0], tokens[i][0])
					}
				}
				if last := pts[len(pts)-1][0]; last != right {
					t.Errorf("%s: the last scrape at x %v, want the axis's end %v", name, last, right)
				}
			}
			if last := tokens[len(tokens)-1][0]; tt.points > 120 && last >= right {
				t.Errorf("the timeline's last interval at x %v, want short of the axis's end: the scrapes went on after it", last)
			}
			// KV-cache use and GPU utilisation rise from 1/points to
			// all: in percent, the last at the top of the 0..100 axis.
			for _, name := range []string{"server-kv-cache", "gpu-utilization"} {
				pts := line(t, all[name], "c0")
				wantFirst := bottom - (bottom-top)/float64(tt.points)
				if first, last := pts[0][1], pts[len(pts)-1][1]; last != top || first < wantFirst-0.1 || first > wantFirst+0.1 {
					t.Errorf("%s: from y %v to %v, want %.1f to %v", name, first, last, wantFirst, float64(top))
				}
			}
			legend := func(c *html.Node) []string {
				var names []string
				for _, g := range findAll(c, func(n *html.Node) bool { return element("g")(n) && hasClass(n, "legend") }) {
					names = append(names, text(g))
				}
				return names
			}
			for name, want := range map[string][]string{"server-queue": {"running", "waiting"}, "server-kv-cache": {"KV cache"},
				"gpu-utilization": {"GPU utilisation"}, "gpu-power": {"power"}} {
				if got := legend(all[name]); !slices.Equal(got, want) {
					t.Errorf("%s's legend %q, want %q", name, got, want)
				}
			}
		})
	}
}

// The server's window figures are a table beside llmrun's TTFT, the GPUs'
// another, energy per output token a headline tile and the section's
// warnings alerts; a section without series draws no chart, and a run
// without a section shows none of it.
func TestServerSectionInTheReport(t *testing.T) {
	serverOnly := steadyRun()
	summarize.AttachServer(serverOnly, summarytest.ServerTargets(0)[:1])
	bucketed := steadyRun()
	targets := summarytest.ServerTargets(120)
	ttft := summarytest.TTFTHistogram()
	ttft.P99 = summarytest.Num(0.235)
	ttft.Buckets = []summary.HistogramBucket{{Le: 0.04, Count: 40}, {Le: 0.05, Count: 60}, {Le: 0.1, Count: 90}, {Le: 0.25, Count: 100}}
	targets[0].Figures[string(engines.QueueTime)], targets[0].Figures[string(engines.TTFT)] = summarytest.FirstBucket(0.01), ttft
	summarize.AttachServer(bucketed, targets)
	tests := []struct {
		name    string
		run     *summary.Summary
		says    []string
		notSays []string
		charts  []string
	}{
		{"a server and a DCGM exporter", serverRun(120), []string{
			"energy per output token0.00417 J/tok (240 tok/J)",
			"enginevllm 0.11.0", "running requests (mean / max)7.50 / 8", "waiting requests (mean / max)0.50 / 3",
			"KV-cache use (mean / max)41.00 % / 88.00 %", "preemptions2", "prefix-cache hit rate25.00 %",
			"queue time, ms (mean / p50 / p99)4.000 / 2.000 / 15.0", "prefill time, ms (mean / p50 / p99)25.0 / 20.0 / 80.0", "TTFT in the server, ms (mean / p50 / p99)31.0 / 25.0 / 101.0",
			"TTFT measured by llmrun, ms (mean / p50 / p99)132.0 / 120.0 / 960.0", "TTFT outside the server: network, HTTP, client, ms (mean / p50 / p99)101.0 / 95.0 / 859.0",
			"http://gpu-1:9400/metrics2 × NVIDIA H10070.00 % / 100.00 %- / -100 / 1901000 J (counter)",
			"http://gpu-1:8000/metrics preempted 2 requests", "GPU 0 (GPU-0) of http://gpu-1:9400/metrics was throttled",
		}, nil, serverNames},
		{"quantiles known only to their bucket: the interval, and no difference from it", bucketed, []string{
			"queue time, ms (mean / p50 / p99)0.100 / ≤ 0.200 / ≤ 10.000",
			"TTFT in the server, ms (mean / p50 / p99)45.0 / 45.0 / 100.0–250.0",
			"TTFT outside the server: network, HTTP, client, ms (mean / p50 / p99)87.0 / 75.0 / —",
		}, []string{"150.0", "297.0", "235.0"}, serverNames},
		{"a server without series", serverOnly, []string{"enginevllm 0.11.0", "preemptions2"},
			[]string{"energy per output token", "GPU telemetry"}, nil},
		{"no server section", steadyRun(), nil, []string{"energy per output token", "GPU telemetry", "TTFT in the server", "preempted"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, doc := render(t, tt.run)
			checkFinite(t, page)
			var rows []string
			for _, n := range findAll(doc, func(n *html.Node) bool { return element("tr")(n) || element("div")(n) || element("p")(n) }) {
				rows = append(rows, text(n))
			}
			for _, want := range tt.says {
				if !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, want) }) {
					t.Errorf("the page does not say %q", want)
				}
			}
			for _, not := range tt.notSays {
				if strings.Contains(text(doc), not) {
					t.Errorf("the page says %q", not)
				}
			}
			all := charts(t, doc)
			for _, name := range serverNames {
				if (all[name] != nil) != slices.Contains(tt.charts, name) {
					t.Errorf("chart %s drawn: %v, want %v", name, all[name] != nil, slices.Contains(tt.charts, name))
				}
			}
			sections := findAll(doc, func(n *html.Node) bool { id, _ := attr(n, "id"); return element("section")(n) && id == "server" })
			if (len(sections) == 1) != (tt.run.Server != nil) {
				t.Errorf("%d server sections, want one only with a server section", len(sections))
			}
		})
	}
}

// A real browser draws the server's charts as the page does.
func TestServerChartsInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	page := filepath.Join(t.TempDir(), "report.html")
	src, want := render(t, serverRun(120))
	if err := os.WriteFile(page, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := html.Parse(bytes.NewReader(browsertest.Run(t, bin, page, "--dump-dom")))
	if err != nil {
		t.Fatalf("parsing chromium's DOM: %v", err)
	}
	wantCharts, gotCharts := charts(t, want), charts(t, got)
	for _, name := range serverNames {
		g, w := gotCharts[name], wantCharts[name]
		if g == nil || w == nil {
			t.Errorf("chart %q: in chromium's DOM %v, in the page %v", name, g != nil, w != nil)
			continue
		}
		if n, m := len(drawn(g)), len(drawn(w)); n != m || n == 0 {
			t.Errorf("chart %q: chromium's DOM draws %d elements, the page %d", name, n, m)
		}
		if xTicks(g) != xTicks(gotCharts["time-throughput"]) {
			t.Errorf("chart %q: in chromium, its time axis %q is not the timeline's %q", name, xTicks(g), xTicks(gotCharts["time-throughput"]))
		}
	}
}
