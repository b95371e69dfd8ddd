package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Console is the output of a run to the terminal: before the run, the
// banner on Stdout; while it goes, the live view on Stderr; at
// its end, the summary on Stdout, as the run's other summary writers get
// it.
type Console struct {
	Stdout, Stderr io.Writer
	Style          textfmt.Style
	// Quiet leaves out the banner and the live view.
	Quiet bool
	// ProgressInterval is how often the live view prints its lines when
	// Stderr is not a terminal; 0 means DefaultProgressInterval.
	ProgressInterval time.Duration
	// Servers, when set before Start, reads the run's scrape targets at
	// their last read (serverwatch.Watch.Now): the live view shows a
	// line per target.
	Servers func() []serverwatch.Now
	// Search, when set before Start, says how far a capacity search is
	// (capacity.Searcher.Progress): the live view shows it under the
	// round that runs.
	Search func() string

	live atomic.Pointer[Live]
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
	// Search, when the run is a capacity search, is what it is set to
	// do: the scenarios' loads are then its mix, not the load.
	Search *capacity.SearchPlan
	// Outputs describe the run's outputs (output.Output.Describe).
	Outputs []string
	// Probes are what the preflight found of each target.
	Probes []summary.Probe
	// ServerMetrics say what the run reads of its servers' metrics and
	// GPU telemetry, a line per target ("server metrics: vLLM at URL,
	// every 1s"; serverwatch.Watch.Describe).
	ServerMetrics []string
}

// Start prints the banner, unless quiet, and starts the live view, which
// read reads: on a terminal a block redrawn in place, otherwise a line per
// scenario every ProgressInterval; stop stops it. Requests reach the view
// through AddRequest. When Stderr is a *Screen, whatever else writes
// through it during the run (logs, warnings) is kept clear of the block.
func (c *Console) Start(b Banner, read func() engine.Progress) (stop func()) {
	if c.Quiet {
		return func() {}
	}
	printBanner(c.Stdout, b)
	scr, ok := c.Stderr.(*Screen)
	if !ok {
		scr = NewScreen(c.Stderr)
	}
	terminal := IsTerminal(scr.w)
	interval := c.ProgressInterval
	if interval <= 0 {
		interval = DefaultProgressInterval
	}
	window := LiveWindow
	if !terminal {
		window = interval
	}
	live := NewLive(time.Now(), window)
	live.servers = c.Servers
	live.search = c.Search
	c.live.Store(live)
	return startLive(scr, live, read, terminal, interval)
}

// AddRequest passes a request that ended to the live view, once started;
// it implements llm.RequestSink.
func (c *Console) AddRequest(r *llm.Record) {
	if live := c.live.Load(); live != nil {
		live.AddRequest(r)
	}
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
	if b.Search != nil {
		for i, line := range b.Search.Lines() {
			label := "search:   "
			if i > 0 {
				label = "          "
			}
			fmt.Fprintf(w, "  %s %s\n", label, line)
		}
	}
	fmt.Fprintf(w, "  scenarios: %d, up to %d VUs\n", len(b.Scenarios), b.MaxVUs)
	for i := range b.Scenarios {
		sc := &b.Scenarios[i]
		start := ""
		switch {
		case sc.StartAfter != "" && sc.StartTime > 0:
			start = fmt.Sprintf(", %s after %s ends", sc.StartTime, sc.StartAfter)
		case sc.StartAfter != "":
			start = fmt.Sprintf(", after %s", sc.StartAfter)
		case sc.StartTime > 0:
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
	for _, m := range b.ServerMetrics {
		fmt.Fprintf(w, "  %s\n", m)
	}
}

// DefaultProgressInterval is how often the live view prints its lines
// when Stderr is not a terminal (a CI log).
const DefaultProgressInterval = 10 * time.Second

// redrawEvery is how often the terminal's live view is drawn again.
const redrawEvery = 500 * time.Millisecond

// startLive runs the live view on scr until stopped: on a terminal a
// block drawn again in place every redrawEvery, otherwise a line per
// scenario every interval.
func startLive(scr *Screen, live *Live, read func() engine.Progress, terminal bool, interval time.Duration) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		every := redrawEvery
		if !terminal {
			every = interval
		}
		t := time.NewTicker(every)
		defer t.Stop()
		var meter ProgressMeter
		ended := map[string]bool{}
		for {
			select {
			case <-done:
				scr.show(nil)
				if !terminal {
					// The scenarios that ended since the last lines.
					for _, line := range live.Lines(read(), ended) {
						fmt.Fprintln(scr, line)
					}
				}
				return
			case <-t.C:
				p := read()
				if terminal {
					scr.show(live.Block(p, &meter, textfmt.TerminalWidth(scr.w)))
					continue
				}
				for _, line := range live.Lines(p, ended) {
					fmt.Fprintln(scr, line)
				}
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

// IsTerminal says whether w is a terminal (or a Screen on one).
func IsTerminal(w io.Writer) bool {
	if scr, ok := w.(*Screen); ok {
		w = scr.w
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
