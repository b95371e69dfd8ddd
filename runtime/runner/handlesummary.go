package runner

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/summary"
)

// summaryData is what handleSummary(data) receives: k6's layout (metrics,
// root_group, options, state) plus llmrun's own summary under "llmrun",
// exactly as --summary-export writes it.
type summaryData struct {
	Metrics   map[string]dataMetric `json:"metrics"`
	RootGroup *dataGroup            `json:"root_group"`
	Options   dataOptions           `json:"options"`
	State     dataState             `json:"state"`
	LLMRun    *summary.Summary      `json:"llmrun"`
}

// dataMetric is one metric as k6 hands it to handleSummary; values carry
// k6's names (count, rate, avg, min, med, max, p(90), value, passes, ...).
type dataMetric struct {
	Type     string             `json:"type"`
	Contains string             `json:"contains"`
	Values   map[string]float64 `json:"values"`
	// Thresholds maps each threshold expression on this metric (or
	// sub-metric) to its outcome, as k6 does.
	Thresholds map[string]dataThreshold `json:"thresholds,omitempty"`
}

type dataThreshold struct {
	OK bool `json:"ok"`
}

// dataGroup is a group of k6's root_group tree; ids are the MD5 of the
// path, as in k6.
type dataGroup struct {
	Name   string       `json:"name"`
	Path   string       `json:"path"`
	ID     string       `json:"id"`
	Groups []*dataGroup `json:"groups"`
	Checks []dataCheck  `json:"checks"`
}

type dataCheck struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	ID     string `json:"id"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
}

type dataOptions struct {
	SummaryTrendStats []string `json:"summaryTrendStats"`
	SummaryTimeUnit   string   `json:"summaryTimeUnit"`
	NoColor           bool     `json:"noColor"`
}

type dataState struct {
	IsStdOutTTY       bool    `json:"isStdOutTTY"`
	IsStdErrTTY       bool    `json:"isStdErrTTY"`
	TestRunDurationMs float64 `json:"testRunDurationMs"`
}

// newSummaryData builds handleSummary's data from llmrun's summary.
func newSummaryData(s *summary.Summary, state dataState, noColor bool) *summaryData {
	d := &summaryData{
		Metrics:   make(map[string]dataMetric, len(s.Metrics)),
		RootGroup: rootGroup(s.Checks),
		Options:   dataOptions{SummaryTrendStats: trendStats(), NoColor: noColor},
		State:     state,
		LLMRun:    s,
	}
	for name, m := range s.Metrics {
		d.Metrics[name] = dataMetric{Type: m.Type, Contains: m.Contains, Values: m.Values}
	}
	for _, t := range s.Thresholds {
		m, ok := d.Metrics[t.Metric]
		if !ok {
			continue
		}
		if m.Thresholds == nil {
			m.Thresholds = map[string]dataThreshold{}
		}
		m.Thresholds[t.Threshold] = dataThreshold{OK: t.Passed}
		d.Metrics[t.Metric] = m
	}
	return d
}

// trendStats are the trend statistics every trend's values carry, in k6's
// order.
func trendStats() []string {
	stats := []string{"avg", "min", "med", "max"}
	for _, p := range summary.Percentiles {
		if p != 50 { // that is med
			stats = append(stats, fmt.Sprintf("p(%g)", p))
		}
	}
	return stats
}

// rootGroup nests the checks in the groups their "group" tag names
// ("::outer::inner"), as k6's root_group does. Only groups holding checks
// appear: the summary keeps no other trace of a group.
func rootGroup(checks []summary.Check) *dataGroup {
	root := newGroup("", "")
	byPath := map[string]*dataGroup{"": root}
	var group func(path string) *dataGroup
	group = func(path string) *dataGroup {
		if g, ok := byPath[path]; ok {
			return g
		}
		i := strings.LastIndex(path, "::")
		if i < 0 { // not a k6 path; hang it off the root as it is
			i = 0
		}
		parent := group(path[:i])
		g := newGroup(strings.TrimPrefix(path[i:], "::"), path)
		parent.Groups = append(parent.Groups, g)
		byPath[path] = g
		return g
	}
	for _, c := range checks {
		g := group(c.Group)
		path := c.Group + "::" + c.Name
		g.Checks = append(g.Checks, dataCheck{Name: c.Name, Path: path, ID: md5Hex(path), Passes: c.Passes, Fails: c.Fails})
	}
	return root
}

func newGroup(name, path string) *dataGroup {
	return &dataGroup{Name: name, Path: path, ID: md5Hex(path), Groups: []*dataGroup{}, Checks: []dataCheck{}}
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// scriptSummary is the script's handleSummary as the run's summary
// writer: it is called with the summary as data, and what it returns is
// written ("stdout" and "stderr" to those streams, anything else to that
// file, relative to the working directory, parent directories created)
// instead of the console's summary. When handleSummary fails, the
// console's summary is printed after all (fallback).
type scriptSummary struct {
	engine         *engine.Engine
	fallback       output.SummaryWriter
	stdout, stderr io.Writer
	color          bool
}

// WriteSummary implements output.SummaryWriter. A handleSummary that
// throws, or returns what it cannot, is a *scriptFailure; the other
// failures (the data cannot be encoded, a file cannot be written, the
// fallback fails) are not. Each failure is one error of the errors.Join
// it returns, the fallback's first.
func (h scriptSummary) WriteSummary(ctx context.Context, s *summary.Summary) error {
	state := dataState{
		IsStdOutTTY:       console.IsTerminal(h.stdout),
		IsStdErrTTY:       console.IsTerminal(h.stderr),
		TestRunDurationMs: s.Serving.DurationSeconds * 1000,
	}
	data, err := json.Marshal(newSummaryData(s, state, !h.color))
	if err != nil {
		return errors.Join(h.fallback.WriteSummary(ctx, s), fmt.Errorf("handleSummary: encoding the summary: %w", err))
	}
	outputs, err := h.engine.HandleSummary(ctx, data)
	if err != nil {
		return errors.Join(h.fallback.WriteSummary(ctx, s), &scriptFailure{err})
	}
	// The files' failures are reported as one.
	return errors.Join(writeSummaryOutputs(outputs, h.stdout, h.stderr))
}

// scriptFailure is a failure of the script's own code after the run: its
// handleSummary threw.
type scriptFailure struct{ err error }

func (f *scriptFailure) Error() string { return f.err.Error() }
func (f *scriptFailure) Unwrap() error { return f.err }

// writeSummaryOutputs writes each output, going on after a failure, and
// returns every failure.
func writeSummaryOutputs(outputs []engine.SummaryOutput, stdout, stderr io.Writer) error {
	var errs []error
	for _, o := range outputs {
		var err error
		switch o.Dest {
		case "stdout":
			_, err = stdout.Write(o.Content)
		case "stderr":
			_, err = stderr.Write(o.Content)
		case "":
			err = errors.New("empty path")
		default:
			if err = os.MkdirAll(filepath.Dir(o.Dest), 0o755); err == nil {
				err = output.WriteFile(o.Dest, func(w io.Writer) error {
					_, err := w.Write(o.Content)
					return err
				})
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("handleSummary: writing %q: %w", o.Dest, output.WithoutPath(err)))
		}
	}
	return errors.Join(errs...)
}
