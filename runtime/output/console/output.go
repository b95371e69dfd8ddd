package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Console is the output of a run to the terminal: before the run, the
// banner on Stdout; while it goes, the live progress line on Stderr; at
// its end, the summary on Stdout, as the run's other summary writers get
// it.
type Console struct {
	Stdout, Stderr io.Writer
	Style          textfmt.Style
	// Quiet leaves out the banner and the progress line.
	Quiet bool
}

var _ output.SummaryWriter = (*Console)(nil)

// Banner is what the console says of a run before it starts.
type Banner struct {
	Version, Script string
	// BaseURL is the server's base URL (printed redacted); Simulated says
	// it is the built-in simulator's.
	BaseURL   string
	Simulated bool
	// Model is the default model of requests that name none.
	Model     string
	Seed      int64
	SeedDrawn bool
	Scenarios []engine.Scenario
	MaxVUs    int
	// Outputs describe the run's outputs (output.Output.Describe).
	Outputs []string
	// Probes are what the preflight found of each target.
	Probes []llm.Probe
}

// Start prints the banner, unless quiet, and starts the progress line,
// which read reads, when Stderr is a terminal; stop stops it.
func (c *Console) Start(b Banner, read func() engine.Progress) (stop func()) {
	if c.Quiet {
		return func() {}
	}
	printBanner(c.Stdout, b)
	if !IsTerminal(c.Stderr) {
		return func() {}
	}
	return startProgress(c.Stderr, read)
}

// WriteSummary prints the end-of-run summary; it implements
// output.SummaryWriter.
func (c *Console) WriteSummary(_ context.Context, s *summary.Summary) error {
	if err := Render(c.Stdout, s, c.Style); err != nil {
		return fmt.Errorf("printing the summary: %w", err)
	}
	return nil
}

func printBanner(w io.Writer, b Banner) {
	fmt.Fprintf(w, "llmrun %s\n", b.Version)
	fmt.Fprintf(w, "  script:    %s\n", b.Script)
	if b.Simulated {
		fmt.Fprintf(w, "  target:    built-in simulator (%s); set --base-url to benchmark a real server\n", llm.RedactURL(b.BaseURL))
	} else {
		fmt.Fprintf(w, "  target:    %s\n", llm.RedactURL(b.BaseURL))
	}
	if b.Model != "" {
		fmt.Fprintf(w, "  model:     %s (default for requests that name none)\n", b.Model)
	}
	if b.SeedDrawn {
		fmt.Fprintf(w, "  seed:      %d (drawn for this run; --seed %d repeats it)\n", b.Seed, b.Seed)
	} else {
		fmt.Fprintf(w, "  seed:      %d\n", b.Seed)
	}
	fmt.Fprintf(w, "  scenarios: %d, up to %d VUs\n", len(b.Scenarios), b.MaxVUs)
	for i := range b.Scenarios {
		sc := &b.Scenarios[i]
		start := ""
		if sc.StartTime > 0 {
			start = fmt.Sprintf(", from %s", sc.StartTime)
		}
		fmt.Fprintf(w, "    * %s: %s, exec %s()%s [%s]\n", sc.Name, sc.Describe(), sc.Exec, start, sc.Executor)
	}
	for _, o := range b.Outputs {
		fmt.Fprintf(w, "  output:    %s\n", o)
	}
	for _, p := range b.Probes {
		fmt.Fprintf(w, "  preflight: %s\n", ProbeLine(p))
	}
}

// startProgress prints a live progress line on w until stopped, its
// output tok/s over the last few seconds (ProgressWindow).
func startProgress(w io.Writer, read func() engine.Progress) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		var meter ProgressMeter
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				fmt.Fprintf(w, "\r\x1b[K%s", meter.Line(read()))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// RenderJSON renders a summary exported as JSON the way the console
// prints it: textSummary(data) in handleSummary scripts (see
// standard.Options.TextSummary).
func RenderJSON(summaryJSON []byte, color bool) (string, error) {
	var s summary.Summary
	if err := json.Unmarshal(summaryJSON, &s); err != nil {
		return "", fmt.Errorf("reading the summary: %w", err)
	}
	var b strings.Builder
	if err := Render(&b, &s, textfmt.Style{Color: color}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// IsTerminal says whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
