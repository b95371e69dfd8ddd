package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"

	"github.com/llmrun/llmrun/bench/internal/simproc"
)

// dashboardCost is one stream count's runs of llmrun for -dashboard,
// without and with the live dashboard, in pairs.
type dashboardCost struct {
	streams       int
	without, with []dashboardRun
}

// dashboardRun is one run of llmrun for -dashboard.
type dashboardRun struct {
	cpu, wall time.Duration
	tokens    uint64
	// events are the updates the attached page read; 0 without the
	// dashboard.
	events int64
	// profiled is the CPU time of the samples of the run's CPU profile
	// whose stack passes through the dashboard's package: its own cost,
	// which the load of other processes does not blur.
	profiled time.Duration
}

// profiledShare is the dashboard's CPU in the run's profile per second
// of run, as a share of one core.
func (r dashboardRun) profiledShare() float64 { return r.profiled.Seconds() / r.wall.Seconds() }

// coreShare is the run's CPU time per second of run, as a share of one
// core.
func (r dashboardRun) coreShare() float64 { return r.cpu.Seconds() / r.wall.Seconds() }

// measureDashboard starts a simulator as measure does and runs llmrun
// c.repeat times without and with --dashboard (a page attached for the
// whole run), each for c.dashboard, the order alternating from one pair
// to the next so that neither always runs on a machine the other warmed.
func measureDashboard(c config, n int, bin, dir string, p pinning) (dashboardCost, error) {
	r := dashboardCost{streams: n}
	sim, err := startStreamSimulator(c, n, bin, p)
	if err != nil {
		return r, err
	}
	defer sim.Stop()
	for i := range c.repeat {
		order := []bool{false, true}
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, withDashboard := range order {
			run, err := runDashboardClient(c, n, i, withDashboard, bin, dir, sim, p)
			if err != nil {
				return r, fmt.Errorf("llmrun (dashboard %v): %w", withDashboard, err)
			}
			if withDashboard {
				r.with = append(r.with, run)
			} else {
				r.without = append(r.without, run)
			}
		}
	}
	return r, nil
}

// runDashboardClient runs "llmrun run" with script against sim for
// c.dashboard, with --dashboard and a page reading its events when
// withDashboard.
func runDashboardClient(c config, n, i int, withDashboard bool, bin, dir string, sim *simproc.Proc, p pinning) (dashboardRun, error) {
	// Both runs are profiled, so that the profiler's own cost is in both.
	profilePath := filepath.Join(dir, fmt.Sprintf("dashboard-%d-%d-%v.pprof", n, i, withDashboard))
	argv := append(append([]string{"env", "LLMRUN_CPUPROFILE=" + profilePath}, p.client...), bin, "run", "-q", "--no-color",
		"--base-url", sim.URL, "-u", strconv.Itoa(n), "-d", c.dashboard.String(),
		"-e", "TOKENS="+strconv.Itoa(c.tokens),
		"--summary-export", filepath.Join(dir, fmt.Sprintf("dashboard-%d-%d-%v.json", n, i, withDashboard)))
	timeout := c.dashboard + time.Duration(c.tokens)*c.decode + 2*time.Minute
	var page *attachedPage
	if withDashboard {
		addr, err := freeLoopbackAddr()
		if err != nil {
			return dashboardRun{}, err
		}
		argv = append(argv, "--dashboard="+addr)
		ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
		defer cancel()
		page = attachPage(ctx, "http://"+addr+"/events")
	}
	f, err := runClient(timeout, sim, append(argv, script), nil)
	if err != nil {
		return dashboardRun{}, err
	}
	run := dashboardRun{cpu: f.cpu, wall: f.wall, tokens: f.tokens}
	dashboard := "without the dashboard"
	if page != nil {
		if run.events, err = page.wait(); err != nil {
			return run, err
		}
		var all time.Duration
		if run.profiled, all, err = dashboardCPU(profilePath); err != nil {
			return run, err
		}
		dashboard = fmt.Sprintf("with the dashboard, its page read %d updates, its own CPU %.3f s of the profile's %.2f s (%.3f %% of one core)",
			run.events, run.profiled.Seconds(), all.Seconds(), 100*run.profiledShare())
	}
	fmt.Printf("  %d streams, %s: %d tokens in %.1f s; llmrun's CPU %.2f s, %.2f %% of one core; load average %s\n",
		n, dashboard, run.tokens, run.wall.Seconds(), run.cpu.Seconds(), 100*run.coreShare(), loadAverage())
	return run, nil
}

// dashboardPackage is the import path of the dashboard's package, whose
// functions' names it prefixes in a profile.
const dashboardPackage = "github.com/llmrun/llmrun/runtime/output/dashboard."

// dashboardCPU is the CPU time of the samples of the CPU profile at path
// whose stack passes through the dashboard's package (its collector, its
// events' encoding and its pages' streams), and of all its samples.
func dashboardCPU(path string) (own, all time.Duration, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("reading llmrun's CPU profile: %w", err)
	}
	defer f.Close()
	prof, err := profile.Parse(f)
	if err != nil {
		return 0, 0, fmt.Errorf("reading llmrun's CPU profile %s: %w", path, err)
	}
	cpu := slices.IndexFunc(prof.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" && t.Unit == "nanoseconds" })
	if cpu < 0 {
		return 0, 0, fmt.Errorf("llmrun's CPU profile %s has no CPU time in nanoseconds", path)
	}
	for _, s := range prof.Sample {
		all += time.Duration(s.Value[cpu])
		if passesThrough(s, dashboardPackage) {
			own += time.Duration(s.Value[cpu])
		}
	}
	return own, all, nil
}

// passesThrough says whether a function of the package whose names begin
// with prefix is on s's stack.
func passesThrough(s *profile.Sample, prefix string) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil && strings.HasPrefix(l.Function.Name, prefix) {
				return true
			}
		}
	}
	return false
}

// freeLoopbackAddr is a port on 127.0.0.1 that was free a moment ago,
// for an llmrun run whose banner -q hides. Should another process take
// it meanwhile, llmrun refuses to start on it (an address in use stops
// a run before it starts) and the measurement fails: the attached page
// never counts another server's stream as llmrun's.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// attachedPage is a page reading a dashboard's events, as a browser's
// EventSource does, in e2eload's process: its cost is not llmrun's.
type attachedPage struct {
	events atomic.Int64
	done   chan error
}

// attachPage connects to url as soon as the dashboard serves it (it
// tries again every 20 ms until ctx ends) and reads its events until the
// stream ends.
func attachPage(ctx context.Context, url string) *attachedPage {
	p := &attachedPage{done: make(chan error, 1)}
	go func() { p.done <- p.read(ctx, url) }()
	return p
}

func (p *attachedPage) read(ctx context.Context, url string) error {
	var resp *http.Response
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the page never reached the dashboard at %s: %w", url, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the dashboard's events at %s: %s", url, resp.Status)
	}
	lines := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := lines.ReadSlice('\n')
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("reading the dashboard's events: %w", err)
		}
		if bytes.HasPrefix(line, dataPrefix) {
			p.events.Add(1)
		}
	}
}

// wait returns, once the stream ended, how many events the page read; an
// error when it read none or could not connect.
func (p *attachedPage) wait() (int64, error) {
	if err := <-p.done; err != nil {
		return 0, err
	}
	n := p.events.Load()
	if n == 0 {
		return 0, errors.New("the page attached to the dashboard read no update")
	}
	return n, nil
}

// printDashboardTable prints each stream count's llmrun CPU per second of
// run without and with the dashboard (medians), the difference in % of
// one core (its median and range over the pairs) and a verdict against
// issue 33's bound.
func printDashboardTable(w io.Writer, c config, rows []dashboardCost) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| streams | pairs | llmrun's CPU without the dashboard | with it, a page attached | difference at equal tokens, % of one core | the dashboard's own CPU in the profile, % of one core |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		profiled := values(r.with, dashboardRun.profiledShare)
		fmt.Fprintf(w, "| %d | %d | %.2f %% | %.2f %% | %s | %.3f (%.3f to %.3f) |\n", r.streams, len(r.with),
			100*median(r.without, dashboardRun.coreShare), 100*median(r.with, dashboardRun.coreShare), r.differenceText(),
			100*medianOf(slices.Clone(profiled)), 100*slices.Min(profiled), 100*slices.Max(profiled))
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "- %d streams, %s runs: %s\n", r.streams, c.dashboard, r.verdict())
	}
}

// differences are the pairs' CPU with the dashboard less without, per
// second of the run with it, in % of one core. A run of fixed length
// streams more or fewer tokens from one run to the next (its start
// varies), so the run without is scaled to the tokens of the run with:
// the difference is the dashboard's, at equal work.
func (r dashboardCost) differences() []float64 {
	d := make([]float64, len(r.with))
	for i, w := range r.with {
		wo := r.without[i]
		scaled := wo.cpu.Seconds() * float64(w.tokens) / float64(wo.tokens)
		d[i] = 100 * (w.cpu.Seconds() - scaled) / w.wall.Seconds()
	}
	return d
}

// differenceText is the median difference, and its range when there are
// several pairs.
func (r dashboardCost) differenceText() string {
	d := r.differences()
	m := medianOf(slices.Clone(d))
	if len(d) == 1 {
		return fmt.Sprintf("%+.2f", m)
	}
	return fmt.Sprintf("%+.2f (%+.2f to %+.2f)", m, slices.Min(d), slices.Max(d))
}

// verdict holds the dashboard's own CPU in the profile (its median over
// the runs) against issue 33's bound, under 1 % of one core at 1,000
// streams, and gives the difference at equal tokens beside it: the
// profile counts what the dashboard runs, the difference also what it
// costs elsewhere (the scheduler, the garbage collector), blurred by the
// machine's other load.
func (r dashboardCost) verdict() string {
	own := 100 * median(r.with, dashboardRun.profiledShare)
	text := fmt.Sprintf("the dashboard's own CPU is %.3f %% of one core, the run's CPU with it %s %% of one core more", own, r.differenceText())
	if r.streams != 1000 {
		return text + " (no target at this count)"
	}
	return fmt.Sprintf("%s (target < 1 %%): %s", text, metOrMissed(own < 1 && medianOf(r.differences()) < 1))
}
