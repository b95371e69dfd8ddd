package console

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/textfmt"
	"github.com/llmrun/llmrun/runtime/window"
)

// LiveWindow is how far back the figures of a running scenario look in
// the terminal's live view: its requests per second, TTFT percentiles and
// errors of the last LiveWindow, its output tok/s too.
const LiveWindow = 5 * time.Second

// Live keeps what the live view shows of each scenario beyond the
// engine's counters: the requests that ended, by second of the run
// (window.Aggregate: the summary's percentiles, to the bit), and for each
// scenario its whole run's. AddRequest is safe for concurrent use and
// costs a lock and the aggregation of one record; Block and Lines read.
type Live struct {
	mu sync.Mutex
	// start is the origin of the seconds requests are counted in, and now
	// the clock the readings take the current second from (time.Now):
	// both the view's own, not the engine's, whose elapsed time counts
	// from a later start.
	start time.Time
	now   func() time.Time
	// window is how far back a running scenario's figures look.
	window    time.Duration
	scenarios map[string]*liveScenario
	// byTags finds a record's scenario by its tag set, which the VUs of a
	// scenario share for each model: one map lookup per record.
	byTags map[*metrics.TagSet]*liveScenario
	// merged is scratch for the readings of a window.
	merged window.Aggregate
	// servers reads the run's scrape targets at their last read, a line
	// each under the scenarios; nil when the run reads none.
	servers func() []serverwatch.Now
	// search says how far a capacity search is; nil outside one.
	search func() string
}

// liveScenario is one scenario's share of Live.
type liveScenario struct {
	// seconds are the requests that ended in each of the last seconds of
	// the run, a ring indexed by second; only the newest holds dense
	// histograms, the others are sealed.
	seconds []liveSecond
	newest  int64
	// total is every request of the scenario; sealed once it is done.
	total  window.Aggregate
	sealed bool
	// tokens is the scenario's output tok/s over the window.
	tokens ProgressMeter
}

// liveSecond is the requests that ended in one second of the run.
type liveSecond struct {
	second int64
	agg    window.Aggregate
}

// NewLive returns a live view of a run that starts at start, whose
// running scenarios' figures cover the last windowLen (at least a second).
func NewLive(start time.Time, windowLen time.Duration) *Live {
	windowLen = max(windowLen.Truncate(time.Second), time.Second)
	return &Live{start: start, now: time.Now, window: windowLen, scenarios: map[string]*liveScenario{}, byTags: map[*metrics.TagSet]*liveScenario{}}
}

// AddRequest counts a request that ended; it implements llm.RequestSink.
func (l *Live) AddRequest(r *llm.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.byTags[r.Tags]
	if s == nil {
		name, _ := r.Tags.Get("scenario")
		s = l.scenario(name)
		l.byTags[r.Tags] = s
	}
	s.total.Add(r)
	sec := int64(r.Time.Sub(l.start) / time.Second)
	if sec <= s.newest-int64(len(s.seconds)) {
		return // ended before the window of the newest
	}
	if sec > s.newest {
		s.seconds[s.newest%int64(len(s.seconds))].agg.Seal()
		s.newest = sec
	}
	b := &s.seconds[sec%int64(len(s.seconds))]
	if b.second != sec {
		b.agg.Reset()
		b.second = sec
	}
	b.agg.Add(r)
}

// scenario returns the named scenario's share, made on first use.
func (l *Live) scenario(name string) *liveScenario {
	s := l.scenarios[name]
	if s == nil {
		s = &liveScenario{seconds: make([]liveSecond, int(l.window/time.Second)+1), tokens: ProgressMeter{Window: l.window}}
		for i := range s.seconds {
			s.seconds[i].second = -1
		}
		l.scenarios[name] = s
	}
	return s
}

// scenarioRow is what one line of the view says of a scenario.
type scenarioRow struct {
	p engine.ScenarioProgress
	// figures are the requests of the window (running) or of the whole
	// scenario (done); windowed says which.
	requests, failed int64
	errors           map[string]int64
	ttft50, ttft99   float64
	reqRate, tokRate float64
	windowed         bool
}

// rows reads the scenarios of p into rows, and records the readings of
// their tokens.
func (l *Live) rows(p engine.Progress) []scenarioRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	tokens := map[string]int64{}
	for _, c := range p.Arrived {
		tokens[c.Scenario] += c.Tokens
	}
	rows := make([]scenarioRow, len(p.Scenarios))
	for i, sp := range p.Scenarios {
		if rd := p.Round; rd != nil {
			// A search's scenario runs as its round's: its records are
			// tagged with the round's name, its progress the round's.
			sp.Name = engine.RoundName(sp.Name, rd.Level)
			sp.Phase, sp.Elapsed, sp.Measured, sp.Duration, sp.Iterations = engine.PhaseRunning, rd.Elapsed, rd.Elapsed, rd.Duration, 0
		}
		r := scenarioRow{p: sp}
		s := l.scenario(sp.Name)
		rate := s.tokens.rate(sp.Elapsed, tokens[sp.Name])
		switch sp.Phase {
		case engine.PhaseWaiting, engine.PhaseNotRun:
		case engine.PhaseDone:
			if !s.sealed {
				s.total.Seal()
				s.sealed = true
			}
			total, ended := &s.total, tokens[sp.Name]
			if l.search != nil {
				// A search's scenario ran as its rounds: their whole runs.
				total, ended = l.rounds(sp.Name, tokens)
			}
			r.fill(total, sp.Measured)
			if secs := sp.Measured.Seconds(); secs > 0 {
				r.tokRate = float64(ended) / secs
			}
		default:
			r.windowed = true
			l.merged.Reset()
			// The window's whole seconds and the current one, which the
			// ring holds (len(s.seconds) = window + 1), over the time they
			// span.
			elapsed := l.now().Sub(l.start)
			from := int64(elapsed/time.Second) - int64(l.window/time.Second)
			for sec := max(from, 0); sec <= from+int64(len(s.seconds))-1; sec++ {
				if b := &s.seconds[sec%int64(len(s.seconds))]; b.second == sec {
					l.merged.Merge(&b.agg)
				}
			}
			span := elapsed - time.Duration(max(from, 0))*time.Second
			r.fill(&l.merged, min(span, sp.Measured))
			r.tokRate = rate
		}
		rows[i] = r
	}
	return rows
}

// rounds are the requests of every round of a search's scenario (named
// scenario@level), merged into l.merged, and their output tokens. A
// round's scenario is its name up to the last @: the rounds of a
// scenario "chat@eu" (chat@eu@4) are not chat's.
func (l *Live) rounds(scenario string, tokens map[string]int64) (*window.Aggregate, int64) {
	l.merged.Reset()
	var n int64
	for name, s := range l.scenarios {
		if i := strings.LastIndex(name, "@"); i >= 0 && name[:i] == scenario {
			l.merged.Merge(&s.total)
			n += tokens[name]
		}
	}
	return &l.merged, n
}

// fill sets r's request figures from a, requests that ended over d.
func (r *scenarioRow) fill(a *window.Aggregate, d time.Duration) {
	r.requests, r.failed = a.Requests, a.Failed
	r.errors = maps.Clone(a.Errors)
	if a.TTFT.Count() > 0 {
		r.ttft50, r.ttft99 = a.TTFT.Percentile(50), a.TTFT.Percentile(99)
	}
	if secs := d.Seconds(); secs > 0 {
		r.reqRate = float64(a.Requests) / secs
	}
}

// Block is the terminal's live view of p: a heading line with the run's
// totals, then a table with a row per scenario, then a line per scrape
// target of the run. Each line is cut to width columns (0: not cut), so
// that none wraps and the block can be redrawn in place.
func (l *Live) Block(p engine.Progress, meter *ProgressMeter, width int) []string {
	rows := l.rows(p)
	done := 0
	for _, r := range rows {
		if r.p.Phase == engine.PhaseDone {
			done++
		}
	}
	head := meter.Line(p)
	if len(rows) > 1 && p.Round == nil {
		head += fmt.Sprintf("  scenarios %d/%d done", done, len(rows))
	}
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tphase\tprogress\tVUs\treq/s\ttok/s\tTTFT p50/p99\terrors\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.p.Name, phase(r.p), r.bar(p.Elapsed), vus(r.p), r.figures("\t"))
	}
	tw.Flush()
	lines := append([]string{head}, strings.Split(strings.TrimSuffix(sb.String(), "\n"), "\n")...)
	if line := l.searchLine(p); line != "" {
		lines = append(lines, line)
	}
	if l.servers != nil {
		lines = append(lines, serverLines(l.servers())...)
	}
	lines = append(lines, fmt.Sprintf("figures of the last %s; of its whole run once a scenario is done", l.window))
	if width > 0 {
		for i, line := range lines {
			lines[i] = cut(line, width-1)
		}
	}
	return lines
}

// Lines is the view of p without a terminal: a line per scenario that
// runs, or that ended since the last call (done, as given), its figures
// those of the last interval (or its whole run once done), then, with
// those, a line per scrape target of the run.
func (l *Live) Lines(p engine.Progress, done map[string]bool) []string {
	var lines []string
	for _, r := range l.rows(p) {
		ended := r.p.Phase == engine.PhaseDone || r.p.Phase == engine.PhaseNotRun
		switch {
		case r.p.Phase == engine.PhaseWaiting:
			continue
		case ended && done[r.p.Name]:
			continue
		case r.p.Phase == engine.PhaseNotRun:
			done[r.p.Name] = true
			lines = append(lines, fmt.Sprintf("[%s] %s: not run", p.Elapsed.Round(time.Second), r.p.Name))
			continue
		case ended:
			done[r.p.Name] = true
		}
		span := "last " + l.window.String()
		if !r.windowed {
			span = "whole run"
		}
		at := strings.TrimSpace(r.percent())
		if r.p.StoppedEarly() {
			at = "at " + at
		}
		lines = append(lines, fmt.Sprintf("[%s] %s: %s %s, VUs %s, %s (%s)",
			p.Elapsed.Round(time.Second), r.p.Name, phase(r.p), at, vus(r.p), r.figures(", "), span))
	}
	if line := l.searchLine(p); line != "" && len(lines) > 0 {
		lines = append(lines, fmt.Sprintf("[%s] %s", p.Elapsed.Round(time.Second), line))
	}
	if l.servers != nil && len(lines) > 0 {
		for _, line := range serverLines(l.servers()) {
			lines = append(lines, fmt.Sprintf("[%s] %s", p.Elapsed.Round(time.Second), line))
		}
	}
	return lines
}

// searchLine says which round of a capacity search runs, at which level,
// and how far the search is; "" outside a search.
func (l *Live) searchLine(p engine.Progress) string {
	rd := p.Round
	if rd == nil || l.search == nil {
		return ""
	}
	return fmt.Sprintf("search: round %d at %s %s, %s of %s; %s", rd.Number, rd.Variable, engine.FormatLevel(rd.Level),
		rd.Elapsed.Truncate(time.Second), rd.Duration, l.search())
}

// phase is what the view calls a scenario's phase: "interrupted" for one
// the run's stop ended before its plan did, its percent then saying
// where it stopped.
func phase(p engine.ScenarioProgress) string {
	if p.StoppedEarly() {
		return "interrupted"
	}
	return string(p.Phase)
}

// vus is a scenario's VUs at work out of its most.
func vus(p engine.ScenarioProgress) string { return fmt.Sprintf("%d/%d", p.ActiveVUs, p.MaxVUs) }

// figures are r's req/s, tok/s, TTFT p50/p99 and errors, separated by sep.
func (r scenarioRow) figures(sep string) string {
	if r.p.Phase == engine.PhaseWaiting || r.p.Phase == engine.PhaseNotRun {
		return strings.Repeat("-"+sep, 3) + "-"
	}
	ttft := "-"
	if r.ttft99 > 0 {
		ttft = textfmt.Num(r.ttft50) + "/" + textfmt.Num(r.ttft99) + " ms"
	}
	parts := []string{textfmt.Num(r.reqRate) + " req/s", textfmt.Num(r.tokRate) + " tok/s", "TTFT p50/p99 " + ttft, errorsText(r.errors)}
	if sep == "\t" {
		parts = []string{textfmt.Num(r.reqRate), textfmt.Num(r.tokRate), ttft, errorsText(r.errors)}
	}
	return strings.Join(parts, sep)
}

// errorsText lists errors by class, most first: "timeout 3, http_5xx 1";
// "0 errors" when none.
func errorsText(errs map[string]int64) string {
	if len(errs) == 0 {
		return "0 errors"
	}
	classes := slices.SortedFunc(maps.Keys(errs), func(a, b string) int {
		if errs[a] != errs[b] {
			return int(errs[b] - errs[a])
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = fmt.Sprintf("%s %d", c, errs[c])
	}
	return strings.Join(parts, ", ")
}

// barWidth is the width of a progress bar, in cells.
const barWidth = 12

// bar is r's progress bar with its percent and time left, or when it
// waits, when it starts.
func (r scenarioRow) bar(runElapsed time.Duration) string {
	switch {
	case r.p.Phase == engine.PhaseNotRun:
		return "-"
	case r.p.Phase == engine.PhaseWaiting && r.p.StartAfter != "":
		return "after " + r.p.StartAfter
	case r.p.Phase == engine.PhaseWaiting:
		if r.p.StartTime > runElapsed {
			in := r.p.StartTime - runElapsed
			return "starts in " + (in + time.Second - 1).Truncate(time.Second).String()
		}
		return "waiting"
	}
	filled := int(r.p.Fraction() * barWidth)
	return strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled) + " " + r.percent()
}

// percent is r's percent done, while known its time left, and once done
// the planned iterations it did not start.
func (r scenarioRow) percent() string {
	s := fmt.Sprintf("%3.0f%%", 100*r.p.Fraction())
	if left, ok := r.p.Remaining(); ok {
		s += " ETA " + left.Round(time.Second).String()
	}
	if n := r.p.NotStarted(); n > 0 && r.p.Phase == engine.PhaseDone && r.p.Iterations > 0 {
		s += fmt.Sprintf(", %d not started", n)
	}
	return s
}

// cut shortens s to n runes at most.
func cut(s string, n int) string {
	if n <= 0 {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
