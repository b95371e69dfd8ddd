package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
	"github.com/llmrun/llmrun/runtime/output/html"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/output/logblock"
	"github.com/llmrun/llmrun/runtime/output/prometheus"
	"github.com/llmrun/llmrun/runtime/output/records"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/timeline"
)

// outputKinds are the kinds --out knows, with how each is made from the
// text after "NAME=".
var outputKinds = map[string]func(value string, getenv func(string) string) (output.Output, error){
	"influxdb": func(value string, getenv func(string) string) (output.Output, error) {
		cfg, err := influxdb.ParseConfig(value, getenv)
		if err != nil {
			return nil, err
		}
		return influxdb.New(cfg), nil
	},
	"jsonl": func(value string, _ func(string) string) (output.Output, error) {
		return asOutput(records.New(records.JSONL, value))
	},
	"csv": func(value string, _ func(string) string) (output.Output, error) {
		return asOutput(records.New(records.CSV, value))
	},
	"html": func(value string, _ func(string) string) (output.Output, error) {
		return asOutput(html.New(value))
	},
	"prometheus": func(value string, _ func(string) string) (output.Output, error) {
		cfg, err := prometheus.ParseConfig(value)
		if err != nil {
			return nil, err
		}
		return prometheus.New(cfg), nil
	},
}

// asOutput is o as an Output, or nil with err: a nil *T returned with an
// error must not become a non-nil Output.
func asOutput[T output.Output](o T, err error) (output.Output, error) {
	if err != nil {
		return nil, err
	}
	return o, nil
}

// outputSet is the run's outputs; it passes each request record to all.
type outputSet []output.Output

var _ llm.RequestSink = outputSet(nil)

// newOutputs makes the outputs of the --out NAME=VALUE flags.
func newOutputs(specs []string, getenv func(string) string) (outputSet, error) {
	var out outputSet
	for _, spec := range specs {
		name, value, ok := strings.Cut(spec, "=")
		newOutput, known := outputKinds[name]
		if !ok || !known {
			names := append(slices.Collect(maps.Keys(outputKinds)), "json")
			slices.Sort(names)
			return nil, fmt.Errorf("--out %q: want NAME=VALUE with NAME one of %s", spec, strings.Join(names, ", "))
		}
		o, err := newOutput(value, getenv)
		if err != nil {
			return nil, fmt.Errorf("--out %s: %w", name, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// AddRequest implements llm.RequestSink.
func (s outputSet) AddRequest(r *llm.Record) {
	for _, o := range s {
		o.AddRequest(r)
	}
}

// start starts every output; the first failure stops the run before it
// begins, and finishes those already started (their goroutines,
// listeners and files).
func (s outputSet) start(ctx context.Context, run output.Run) error {
	for i, o := range s {
		if err := o.Start(ctx, run); err != nil {
			s[:i].finish(nil)
			return fmt.Errorf("%s: %w", o.Describe(), err)
		}
	}
	return nil
}

// finish hands every output the summary (nil when the run made none) and
// collects their reports. Each flushes within its own timeout, also after
// Ctrl-C.
func (s outputSet) finish(sum *summary.Summary) []summary.OutputReport {
	reports := make([]summary.OutputReport, len(s))
	for i, o := range s {
		reports[i] = o.Finish(context.Background(), sum)
	}
	return reports
}

// resultFiles splits the --out json=FILE flags from the other outputs:
// they are the result file, as --summary-export writes it, written once the
// other outputs have reported. It returns every result file to write and
// the other --out specs.
func resultFiles(summaryExport string, outs []string) (files []output.FileFlag, others []string) {
	if summaryExport != "" {
		files = append(files, output.FileFlag{Flag: "--summary-export", Path: summaryExport})
	}
	for _, spec := range outs {
		if path, ok := strings.CutPrefix(spec, "json="); ok {
			files = append(files, output.FileFlag{Flag: "--out json", Path: path})
			continue
		}
		others = append(others, spec)
	}
	return files, others
}

// fileOutputs are the --out kinds whose value is the file they write.
var fileOutputs = []string{"jsonl", "csv", "html"}

// WritesFile reports whether the --out output name=value writes a file:
// json (but json=StdoutResult, printed), and the fileOutputs.
func WritesFile(name, value string) bool {
	return name == "json" && value != StdoutResult || slices.Contains(fileOutputs, name)
}

// checkOutputFiles checks, before the run, every file the run is to write:
// the result files and the --out outputs that write a file. Two flags
// naming one file are a bad command line (exitUsage); a file that cannot
// be written there fails as an output that cannot start does (Errored).
// It returns Passed, or the verdict with the error.
func checkOutputFiles(results []output.FileFlag, outs []string) (Verdict, error) {
	files := withFileOutputs(results, outs)
	if err := output.SamePaths(files); err != nil {
		return InvalidOutputs, err
	}
	for _, f := range files {
		if printed(f) {
			continue
		}
		check := output.CheckPath
		if streamed(f) {
			check = output.CheckStreamPath
		}
		if err := check(f.Path); err != nil {
			return Errored, fmt.Errorf("%s: cannot write there: %w", f, err)
		}
	}
	return Passed, nil
}

// streamed reports whether f is a file written while the run goes, not
// once at its end: a records file (--out jsonl=, csv=).
func streamed(f output.FileFlag) bool {
	return f.Flag == "--out jsonl" || f.Flag == "--out csv"
}

// withFileOutputs is results and the files of the --out outputs (not
// json=, which are results) that write one.
func withFileOutputs(results []output.FileFlag, outs []string) []output.FileFlag {
	files := slices.Clone(results)
	for _, spec := range outs {
		name, path, _ := strings.Cut(spec, "=")
		if slices.Contains(fileOutputs, name) {
			files = append(files, output.FileFlag{Flag: "--out " + name, Path: path})
		}
	}
	return files
}

// FilesWritten is every file a run of --summary-export summaryExport and
// --out outs writes (a result printed to standard output included), for
// a command that writes files of its own to check against them with
// output.SamePaths.
func FilesWritten(summaryExport string, outs []string) []output.FileFlag {
	results, others := resultFiles(summaryExport, outs)
	return withFileOutputs(results, others)
}

// StdoutResult is the path of "--out json=-": the result file printed to
// standard output after the summary, as a block of marked lines
// (runtime/output/logblock) that "llmrun merge" reads back from a log.
const StdoutResult = "-"

// printed reports whether f is "--out json=-", printed rather than
// written to a file.
func printed(f output.FileFlag) bool {
	return f.Flag == "--out json" && f.Path == StdoutResult
}

// resultFile is a result file as a summary writer: the summary as JSON,
// written whole or not at all; for StdoutResult, a block on stdout.
type resultFile struct {
	output.FileFlag
	stdout io.Writer
}

// WriteSummary implements output.SummaryWriter.
func (f resultFile) WriteSummary(_ context.Context, s *summary.Summary) error {
	if printed(f.FileFlag) {
		var doc bytes.Buffer
		err := s.WriteJSON(&doc)
		if err == nil {
			instance := s.Meta.Tags["instance"]
			if instance == "" {
				instance = logblock.NoInstance
			}
			err = logblock.Write(f.stdout, s.Meta.RunID, instance, doc.Bytes())
		}
		if err != nil {
			return fmt.Errorf("%s: the result was not printed: %w", f, err)
		}
		return nil
	}
	if err := output.WriteFile(f.Path, s.WriteJSON); err != nil {
		return fmt.Errorf("%s: the result file was not written: %w", f, err)
	}
	return nil
}

// outputLosses says, one line per output, what each output that failed
// lost: records or points dropped, or an error (a failed flush or close);
// nil when every output stored everything.
func outputLosses(reports []summary.OutputReport) []string {
	var lines []string
	for _, r := range reports {
		if r.Dropped == 0 && r.Err == "" {
			continue
		}
		line := fmt.Sprintf("output %s lost data: %d written, %d dropped", r.Output, r.Written, r.Dropped)
		if r.Err != "" {
			line += ": " + r.Err
		}
		lines = append(lines, line)
	}
	return lines
}

// fanOut passes each request record to the timeline, the console's live
// view and the outputs, and to the goodput counter when the run has
// goodput bounds.
type fanOut struct {
	timeline *timeline.Recorder
	console  *console.Console
	outputs  outputSet
	goodput  *goodputCounter
	// dashboard is the live web dashboard's collector once it started;
	// nil without one.
	dashboard atomic.Pointer[dashboard.Collector]
	// report is the collector of the figures this instance sends
	// instance 0 of a distributed run (figures.go); nil without one.
	report atomic.Pointer[dashboard.Collector]
}

// AddRequest implements llm.RequestSink.
func (s *fanOut) AddRequest(r *llm.Record) {
	s.timeline.AddRequest(r)
	s.console.AddRequest(r)
	s.outputs.AddRequest(r)
	if s.goodput != nil {
		s.goodput.AddRequest(r)
	}
	if c := s.dashboard.Load(); c != nil {
		c.AddRequest(r)
	}
	if c := s.report.Load(); c != nil {
		c.AddRequest(r)
	}
}

// newRunID returns a random identifier for a run.
func newRunID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// defaultTestID is the test ID of a script run without --testid: its file
// name without extension (a stock scenario's name).
func defaultTestID(script string) string {
	base := filepath.Base(strings.TrimPrefix(script, "stock:"))
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// resolvedOptions are scenarios as the engine resolved them (script,
// config file and command line together), for the result file: each
// scenario's executor settings with its exec, start time (and startAfter),
// warmup and tags, as options name them. Scenario
// env is left out: it may hold secrets.
func resolvedOptions(scs []engine.Scenario) json.RawMessage {
	scenarios := make(map[string]map[string]any, len(scs))
	for _, sc := range scs {
		fields := map[string]any{}
		if b, err := json.Marshal(sc.Config); err == nil {
			json.Unmarshal(b, &fields)
		}
		fields["executor"], fields["exec"], fields["startTime"] = sc.Executor, sc.Exec, sc.StartTime.String()
		if sc.StartAfter != "" {
			fields["startAfter"] = sc.StartAfter
		}
		switch {
		case sc.Warmup.Iterations > 0:
			fields["warmup"] = sc.Warmup.Iterations
		case sc.Warmup.Duration > 0:
			fields["warmup"] = sc.Warmup.Duration.String()
		}
		if len(sc.Tags) > 0 {
			fields["tags"] = sc.Tags
		}
		scenarios[sc.Name] = fields
	}
	b, err := json.Marshal(map[string]any{"scenarios": scenarios})
	if err != nil {
		return nil
	}
	return b
}
