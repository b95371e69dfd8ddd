package results

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/report"
	"github.com/llmrun/llmrun/runtime/summary"
)

// CrossReport is the HTML page of several result files drawn together
// (llmrun report a.json b.json ...): In the result files, Labels their
// names on the page (--label, in the order of In; an empty one, or
// fewer than In, leaves those runs their own names, runLabels), Baseline the file the others are judged
// against ("" the first), GPUs the runs' GPU counts (--gpus: one for
// every run, or one per file in the order of In; none takes each run's
// GPU telemetry), SLO the objective to draw, Out the page.
type CrossReport struct {
	In, Labels    []string
	Baseline, Out string
	GPUs          []int
	SLO           *summary.SLO
}

// MaxCrossRuns is the most result files a cross-run page draws: a column
// of its table and a labelled point of each chart a run, more would be
// read by no one (and held in memory together).
const MaxCrossRuns = 50

// crossGate is how the page judges the treatments: as llmrun compare does
// by default (its --tolerance 10%, --confidence 99%, default figures).
func crossGate() Gate {
	return Gate{Options: regression.Options{Tolerance: 0.1, Confidence: regression.DefaultConfidence}, Figures: regression.Headline(), DefaultFigures: true}
}

// Check refuses what is wrong in r before any file is read: too few or
// too many files, one file given twice, more labels or GPU counts than
// files, a label given twice, no GPU, a baseline not among the files.
// llmrun report calls it to answer with a usage error; Write calls it
// again.
func (r CrossReport) Check() error {
	if len(r.In) < 2 || len(r.In) > MaxCrossRuns {
		return fmt.Errorf("a cross-run report takes two result files or more, up to %d, not %d", MaxCrossRuns, len(r.In))
	}
	if i := slices.IndexFunc(r.GPUs, func(n int) bool { return n < 1 }); i >= 0 {
		return fmt.Errorf("--gpus %d: want 1 GPU or more", r.GPUs[i])
	}
	switch {
	case len(r.GPUs) > 1 && len(r.GPUs) != len(r.In):
		return fmt.Errorf("--gpus given %d times for %d result files: give one count for every run, or one per file", len(r.GPUs), len(r.In))
	case len(r.Labels) > len(r.In):
		return fmt.Errorf("--label given %d times for %d result files", len(r.Labels), len(r.In))
	case r.Baseline != "" && !slices.ContainsFunc(r.In, func(f string) bool { return SameResult(f, r.Baseline) }):
		return fmt.Errorf("--baseline %s: not one of the result files given (%s)", r.Baseline, strings.Join(r.In, ", "))
	}
	for i, f := range r.In {
		switch j := slices.IndexFunc(r.In[:i], func(g string) bool { return SameResult(g, f) }); {
		case j >= 0 && r.In[j] == f:
			return fmt.Errorf("%s given twice", f)
		case j >= 0:
			return fmt.Errorf("%s and %s are one result file: give it once", r.In[j], f)
		}
	}
	for i, l := range r.Labels {
		if l != "" && slices.Contains(r.Labels[:i], l) {
			return fmt.Errorf("--label %s given twice: each run needs a name of its own", l)
		}
	}
	return nil
}

// Write reads the result files, judges each against the baseline and
// writes the page; it is made in memory first, so that a failure leaves
// no partial file.
func (r CrossReport) Write() error {
	if err := r.Check(); err != nil {
		return err
	}
	base := 0
	if r.Baseline != "" {
		base = slices.IndexFunc(r.In, func(in string) bool { return SameResult(in, r.Baseline) })
	}
	if err := CheckOutput(r.Out); err != nil {
		return err
	}
	runs := make([]report.CrossRunInput, len(r.In))
	for i, in := range r.In {
		s, err := ReadResult(in)
		if err != nil {
			return err
		}
		if j := slices.IndexFunc(runs[:i], func(c report.CrossRunInput) bool { return s.Meta.RunID != "" && c.Summary.Meta.RunID == s.Meta.RunID }); j >= 0 {
			return fmt.Errorf("%s and %s hold the same run (run_id %s): give it once", r.In[j], in, s.Meta.RunID)
		}
		runs[i] = report.CrossRunInput{File: in, Summary: s}
	}
	labels := runLabels(r.In, runs)
	for i, l := range r.Labels {
		if l != "" {
			labels[i] = l
		}
	}
	for i, l := range labels {
		if j := slices.Index(labels, l); j != i {
			return fmt.Errorf("%s and %s are both labelled %q: give each a --label of its own", r.In[j], r.In[i], l)
		}
		runs[i].Label = l
	}
	g := crossGate()
	b := runs[base]
	for i := range runs {
		if i == base {
			continue
		}
		c := runs[i]
		runs[i].Against = Compare(b.File, b.Summary, c.File, c.Summary, g)
		switch {
		case foreign(b.Summary) || foreign(c.Summary):
			runs[i].Note = fmt.Sprintf("measured by %s, the baseline by %s: %s", toolOf(c.Summary), toolOf(b.Summary), toolsDiffer)
		case b.Summary.Meta.ScriptSHA256 != c.Summary.Meta.ScriptSHA256:
			runs[i].Note = fmt.Sprintf("ran another script than the baseline (%s, not %s)", c.Summary.Meta.Script, b.Summary.Meta.Script)
		}
	}
	var page bytes.Buffer
	if err := report.RenderCrossRun(&page, report.CrossRun{Runs: runs, Baseline: base, GPUs: r.GPUs, SLO: r.SLO}); err != nil {
		return err
	}
	if err := output.WriteFile(r.Out, func(w io.Writer) error { _, err := w.Write(page.Bytes()); return err }); err != nil {
		return fmt.Errorf("-o %s: the report was not written: %w", r.Out, err)
	}
	return nil
}

// runLabels names each run by what it says of itself: its "label" tag,
// else its test id; runs that say nothing, or the same as another, by
// their file's name without .json, or by the whole path when two files
// share a name.
func runLabels(files []string, runs []report.CrossRunInput) []string {
	labels := make([]string, len(runs))
	for i, r := range runs {
		m := r.Summary.Meta
		labels[i] = m.Tags["label"]
		if labels[i] == "" {
			labels[i] = m.TestID
		}
	}
	byFile := func(i int) string { return strings.TrimSuffix(filepath.Base(files[i]), filepath.Ext(files[i])) }
	replaceShared(labels, byFile)
	replaceShared(labels, func(i int) string { return files[i] })
	return labels
}

// replaceShared gives every label that is empty or shared with another
// the name by(i).
func replaceShared(labels []string, by func(i int) string) {
	counts := map[string]int{}
	for _, l := range labels {
		counts[l]++
	}
	for i, l := range labels {
		if l == "" || counts[l] > 1 {
			labels[i] = by(i)
		}
	}
}
