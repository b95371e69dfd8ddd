package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strings"
	"sync"

	"github.com/llmrun/llmrun/runtime/output"
)

// Bounds of a report (llmrun dashboard report, --dashboard-export).
const (
	// MaxReportUpdates bounds the updates a report draws, besides the
	// run's last: an hour at a period of 1 s. A longer run's updates are
	// folded into one in twos, then fours, and so on, until they fit.
	MaxReportUpdates = 3600
	// MaxReportSize bounds a report's updates, encoded: they are folded
	// as above until they fit (told by the largest update of each).
	MaxReportSize = 32 << 20
)

// reportMark is where the page's HTML takes a report's notes, which make
// it a report: it draws its events and opens no stream.
var reportMark = []byte("/*REPORT*/null")

// Report gathers a run's events for a report: the dashboard's page as one
// HTML file that needs no server, showing the whole run. Past
// MaxReportUpdates (or MaxReportSize), consecutive updates are folded into
// one (fold), and the page says so; the run's last update is never folded,
// so that the report's final state is the run's. It is safe for
// concurrent use.
type Report struct {
	mu sync.Mutex
	// kept are the updates drawn, each folded from one update or more;
	// pending is the one being folded, of every updates at most.
	kept    []foldedUpdate
	pending foldedUpdate
	every   int
	// total counts the updates added, size the kept ones' sizes.
	total, size int
	notes       []string
}

// foldedUpdate is one update drawn: n updates folded into ev, the
// largest of them size bytes encoded.
type foldedUpdate struct {
	ev      Event
	n, size int
}

// NewReport returns an empty report.
func NewReport() *Report { return &Report{every: 1} }

// Note adds a sentence the report shows above its figures: why it shows
// less than a whole run (interrupted, a recording cut short).
func (r *Report) Note(sentence string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, sentence)
}

// Add adds the run's next event.
func (r *Report) Add(ev Event) {
	size := MaxEventSize
	if b, err := encodeEvent(ev); err == nil {
		size = len(b)
	}
	r.add(ev, size)
}

// add adds the run's next event, size bytes encoded (encodeEvent).
func (r *Report) add(ev Event, size int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	if ev.Done {
		r.flush()
		r.keep(foldedUpdate{ev: ev, n: 1, size: size})
		return
	}
	if r.pending.n == 0 {
		r.pending = foldedUpdate{ev: ev, n: 1, size: size}
	} else {
		r.pending = foldedUpdate{ev: fold(r.pending.ev, ev), n: r.pending.n + 1, size: max(r.pending.size, size)}
	}
	if r.pending.n >= r.every {
		r.flush()
	}
}

// flush keeps the pending update, if any.
func (r *Report) flush() {
	if r.pending.n > 0 {
		r.keep(r.pending)
		r.pending = foldedUpdate{}
	}
}

// keep appends u to the kept updates, folding those in pairs first until
// it fits in the bounds; the run's last update may be one beyond them.
func (r *Report) keep(u foldedUpdate) {
	most, size := MaxReportUpdates, MaxReportSize
	if u.ev.Done {
		most, size = most+1, size+u.size
	}
	for len(r.kept) > 1 && (len(r.kept)+1 > most || r.size+u.size > size) {
		r.thin()
	}
	r.kept = append(r.kept, u)
	r.size += u.size
}

// thin folds the kept updates in pairs (an odd last one stays alone) and
// doubles how many the next one folds.
func (r *Report) thin() {
	r.every *= 2
	thinned := make([]foldedUpdate, 0, (len(r.kept)+1)/2)
	r.size = 0
	for i := 0; i < len(r.kept); i += 2 {
		u := r.kept[i]
		if i+1 < len(r.kept) {
			next := r.kept[i+1]
			u = foldedUpdate{ev: fold(u.ev, next.ev), n: u.n + next.n, size: max(u.size, next.size)}
		}
		thinned = append(thinned, u)
		r.size += u.size
	}
	r.kept = thinned
}

// WriteHTML writes the report: the dashboard's page with the events
// drawn in it and its notes, and the note of the updates folded, if any.
func (r *Report) WriteHTML(w io.Writer) error {
	page, err := assets.ReadFile("page.html")
	if err != nil {
		return fmt.Errorf("dashboard report: reading its page: %w", err)
	}
	history, report := bytes.Index(page, historyMark), bytes.Index(page, reportMark)
	if history < 0 || report < history {
		return errors.New("dashboard report: the page lacks the marks of its events and its notes")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
	var b bytes.Buffer
	b.Write(page[:history])
	b.WriteByte('[')
	most := 1
	for i, u := range r.kept {
		ev, err := encodeEvent(u.ev)
		if err != nil {
			return fmt.Errorf("dashboard report: %w", err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(ev)
		most = max(most, u.n)
	}
	b.WriteByte(']')
	b.Write(page[history+len(historyMark) : report])
	notes := r.notes
	if most > 1 {
		notes = append(notes[:len(notes):len(notes)], foldedNote(r.total, len(r.kept), most))
	}
	meta, err := json.Marshal(struct {
		Notes []string `json:"notes"`
	}{Notes: append([]string{}, notes...)})
	if err != nil {
		return fmt.Errorf("dashboard report: %w", err)
	}
	b.Write(meta)
	b.Write(page[report+len(reportMark):])
	_, err = w.Write(b.Bytes())
	return err
}

// foldedNote says that the report folds up to most updates into one.
func foldedNote(total, drawn, most int) string {
	return fmt.Sprintf("This run's %d updates are drawn as %d: every %d consecutive updates are folded into one, "+
		"whose requests, errors and rates are those of all %d, and whose latency percentiles are the highest of the %d.",
		total, drawn, most, most, most)
}

// fold is the update of a and the later b together: their requests,
// errors, drops and lagged iterations added, their rates, mean lag and
// energy per token over both periods, each latency percentile the higher
// of the two; their progress, server readings and any figure not named
// here b's, the later.
func fold(a, b Event) Event {
	out := b
	out.Period = a.Period + b.Period
	out.All = foldFigures(a.All, a.Period, b.All, b.Period)
	out.JoulesPerToken = foldPerToken(a.JoulesPerToken, a.All.TokRate*a.Period, b.JoulesPerToken, b.All.TokRate*b.Period)
	if out.Servers == nil {
		out.Servers = a.Servers
	}
	out.Scenarios = nil
	later := map[string]Scenario{}
	for _, s := range b.Scenarios {
		later[s.Name] = s
	}
	for _, s := range a.Scenarios {
		if bs, ok := later[s.Name]; ok {
			out.Scenarios = append(out.Scenarios, foldScenario(s, a.Period, bs, b.Period))
			delete(later, s.Name)
		} else {
			out.Scenarios = append(out.Scenarios, foldScenario(s, a.Period, s.progress(), b.Period))
		}
	}
	for _, s := range b.Scenarios {
		if _, ok := later[s.Name]; ok {
			out.Scenarios = append(out.Scenarios, foldScenario(Scenario{}, a.Period, s, b.Period))
		}
	}
	return out
}

// foldScenario is a scenario's update a over pa seconds and its next b
// over pb together: b's progress, with the figures of both.
func foldScenario(a Scenario, pa float64, b Scenario, pb float64) Scenario {
	out := b
	out.Figures = foldFigures(a.Figures, pa, b.Figures, pb)
	out.PeriodDropped = a.PeriodDropped + b.PeriodDropped
	if out.Lagged = a.Lagged + b.Lagged; out.Lagged > 0 {
		out.Lag = (a.Lag*float64(a.Lagged) + b.Lag*float64(b.Lagged)) / float64(out.Lagged)
	}
	return out
}

// progress is s's progress alone, without the figures of its period:
// what a scenario absent from the later of two folded updates stands at.
func (s Scenario) progress() Scenario {
	return Scenario{Name: s.Name, Phase: s.Phase, Progress: s.Progress, ETA: s.ETA, VUs: s.VUs, MaxVUs: s.MaxVUs,
		Iterations: s.Iterations, Dropped: s.Dropped}
}

// foldPerToken is the per-token figure of two periods' a over ta tokens
// and b over tb: their mean weighted by tokens, over those of the
// periods that have one; nil when neither does.
func foldPerToken(a *float64, ta float64, b *float64, tb float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case ta+tb <= 0:
		return b
	}
	v := (*a*ta + *b*tb) / (ta + tb)
	return &v
}

// foldFigures are a's over pa seconds and b's over the next pb together.
func foldFigures(a Figures, pa float64, b Figures, pb float64) Figures {
	out := b
	out.Requests, out.Failed = a.Requests+b.Requests, a.Failed+b.Failed
	out.Errors = nil
	if len(a.Errors)+len(b.Errors) > 0 {
		out.Errors = maps.Clone(a.Errors)
		if out.Errors == nil {
			out.Errors = map[string]int64{}
		}
		for k, n := range b.Errors {
			out.Errors[k] += n
		}
	}
	if p := pa + pb; p > 0 {
		out.ReqRate = (a.ReqRate*pa + b.ReqRate*pb) / p
		out.TokRate = (a.TokRate*pa + b.TokRate*pb) / p
	}
	out.TTFT, out.TPOT, out.E2E, out.ITL = higher(a.TTFT, b.TTFT), higher(a.TPOT, b.TPOT), higher(a.E2E, b.E2E), higher(a.ITL, b.ITL)
	return out
}

// higher is each percentile's higher of a and b.
func higher(a, b Percentiles) Percentiles {
	return Percentiles{P50: max(a.P50, b.P50), P90: max(a.P90, b.P90), P99: max(a.P99, b.P99)}
}

// ReportName is the report's default name for a recording: its name
// without ".gz", with ".html".
func ReportName(recording string) string {
	return strings.TrimSuffix(recording, ".gz") + ".html"
}

// WriteReport writes the report of the recording in to the file out,
// whole or not at all. A recording cut short is reported up to the cut,
// the page saying so, and warning says so too; any other flaw of the
// recording is an error naming its file and line.
func WriteReport(in, out string) (warning string, err error) {
	if output.SamePaths([]output.FileFlag{{Flag: "FILE", Path: in}, {Flag: "-o", Path: out}}) != nil {
		return "", fmt.Errorf("-o %s: that is the recording itself; name another file", out)
	}
	if err := output.CheckPath(out); err != nil {
		return "", fmt.Errorf("-o %s: cannot write there: %w", out, err)
	}
	events, err := ReadRecording(in)
	if err != nil {
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(events) == 0 {
			return "", err
		}
		warning = fmt.Sprintf("%v: the report shows the %d updates before the cut", err, len(events))
	}
	if len(events) == 0 {
		return "", fmt.Errorf("%s: holds no update to report", in)
	}
	r := NewReport()
	for _, ev := range events {
		r.Add(ev)
	}
	if warning != "" {
		r.Note(fmt.Sprintf("The recording %s was cut short after %d updates (was its run killed?): this report shows those.", filepath.Base(in), len(events)))
	}
	if err := output.WriteFile(out, r.WriteHTML); err != nil {
		return warning, fmt.Errorf("-o %s: the report was not written: %w", out, err)
	}
	return warning, nil
}
