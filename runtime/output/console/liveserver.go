package console

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// serverLines are the live view's lines of the run's scrape targets, one
// per target, from its last read: "server vLLM 127.0.0.1:8000: running
// 14, waiting 3, KV 42 %, preemptions +2", "gpu DCGM exporter
// 127.0.0.1:9400: 2 GPUs, util 87 %, 612 W"; a target whose last read
// failed says so, and why.
func serverLines(targets []serverwatch.Now) []string {
	lines := make([]string, 0, len(targets))
	for _, t := range targets {
		lines = append(lines, targetName(t)+": "+targetNow(t))
	}
	return lines
}

// targetName is "server vLLM 127.0.0.1:8000", "gpu nvidia-smi": the
// kind, the engine when known, and the host and port.
func targetName(t serverwatch.Now) string {
	kind := "server"
	if t.Kind == summary.TargetGPU {
		kind = "gpu"
	}
	parts := []string{kind}
	if t.EngineTitle != "" {
		parts = append(parts, t.EngineTitle)
	}
	if u, err := url.Parse(t.URL); err == nil && u.Host != "" {
		parts = append(parts, u.Host)
	} else if t.URL != t.EngineTitle {
		parts = append(parts, t.URL)
	}
	return strings.Join(parts, " ")
}

// targetNow is what a target's last read said.
func targetNow(t serverwatch.Now) string {
	switch {
	case t.Failed != "":
		return "last scrape failed (" + t.Failed + ")"
	case t.At.IsZero():
		return "no answer yet"
	case t.Kind == summary.TargetGPU:
		return gpuNow(t)
	case t.Engine == "":
		return "no known engine"
	}
	var figures []string
	add := func(name string, v *float64, format func(float64) string) {
		if v != nil {
			figures = append(figures, name+" "+format(*v))
		}
	}
	add("running", t.Running, textfmt.Num)
	add("waiting", t.Waiting, textfmt.Num)
	add("KV", t.KVCacheUsage, wholePercent)
	add("preemptions", t.Preemptions, func(v float64) string { return "+" + textfmt.Num(v) })
	if len(figures) == 0 {
		return "none of its figures exposed"
	}
	return strings.Join(figures, ", ")
}

// gpuNow is "2 GPUs, util 87 %, 612 W".
func gpuNow(t serverwatch.Now) string {
	figures := []string{textfmt.Count(len(t.GPUs), "GPU")}
	if t.Utilization != nil {
		figures = append(figures, "util "+wholePercent(*t.Utilization))
	}
	if t.Power != nil {
		figures = append(figures, fmt.Sprintf("%.0f W", *t.Power))
	}
	return strings.Join(figures, ", ")
}

// wholePercent is a fraction in whole percent: "42 %".
func wholePercent(fraction float64) string { return fmt.Sprintf("%.0f %%", 100*fraction) }
