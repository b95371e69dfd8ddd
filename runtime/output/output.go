// Package output defines where a run's results go. An Output receives
// every measured request while the run goes and the summary at its end,
// and reports what it stored into the summary. A SummaryWriter receives
// the finished summary, those reports included: the console prints it, a
// result file stores it. Each kind of output (the console, the InfluxDB
// writer, files) is a package of its own below this one.
package output

import (
	"context"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Output is one destination of a run's results.
type Output interface {
	// Describe names the output for the banner and the summary, without
	// secrets: "influxdb http://127.0.0.1:8086 (bucket llmrun/autogen)".
	Describe() string
	// Start prepares the output before the run; it fails when the output
	// cannot work (an unreachable server, a refused token), so that the
	// run does not start for nothing.
	Start(ctx context.Context, run Run) error
	// AddRequest takes one measured request; it must not block (see
	// llm.RequestSink).
	llm.RequestSink
	// Finish writes the run's summary and flushes what is buffered,
	// giving up when ctx ends; it reports what was stored and lost.
	Finish(ctx context.Context, s *summary.Summary) summary.OutputReport
}

// SummaryWriter is one destination of a run's finished summary, written
// once every Output has reported into it.
type SummaryWriter interface {
	// WriteSummary writes the summary; an error says what was lost. A
	// writer that loses several things returns them as one errors.Join.
	WriteSummary(ctx context.Context, s *summary.Summary) error
}

// Run is what an output knows of the run it stores.
type Run struct {
	// ID identifies this run (random, unique); TestID names the test
	// whose runs are compared over time (--testid).
	ID, TestID string
	// Tags are the command line's --tag pairs, on everything stored.
	Tags map[string]string
	// Start is when the run started.
	Start time.Time
	// Progress reads the run's live figures (the engine's: active VUs,
	// output tokens arrived by scenario and model), for periodic points
	// and scrapes.
	Progress func() engine.Progress
	// Servers reads the run's scrape targets (its servers' metrics and
	// GPU telemetry) at their last read; nil when the run reads none.
	Servers func() []serverwatch.Now
	// Warn tells the user at once, while the run goes on, of a failure
	// that the output's report will also carry at the end (a records
	// file whose disk is full); nil when no one listens. It may be
	// called from any goroutine.
	Warn func(message string)
}
