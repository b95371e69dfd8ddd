package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"sync"
	"time"
)

// DefaultInterval is how often a Scraper reads its targets when its
// Config names no interval.
const DefaultInterval = time.Second

// DefaultMaxPoints is how many periodic points a target's series keeps
// at most when the Config names no bound: 16 minutes at one-second
// intervals before the series is thinned, more points than a chart's
// width. A point of vLLM's counters and gauges holds about 10 KB, so a
// series about 10 MB.
const DefaultMaxPoints = 1000

// Target is a URL a Scraper reads, with an optional label that names it
// to users ("prefill", "decode"); the URL names it otherwise.
type Target struct {
	URL   string
	Label string
}

// Config says what a Scraper reads and how often.
type Config struct {
	Targets []Target
	// Interval between scrapes of a target; DefaultInterval when zero.
	Interval time.Duration
	// Timeout of one scrape; the smaller of DefaultTimeout and Interval
	// when zero.
	Timeout time.Duration
	// Client sends the scrapes; nil, a client of the Scraper's own.
	Client *http.Client
	// MaxPoints bounds each target's series; DefaultMaxPoints when zero.
	MaxPoints int
	// Families are the metric families a series keeps of each periodic
	// scrape; nil keeps the counters, gauges and untyped ones, which is
	// what charts over time need, and leaves out the histograms and
	// summaries, which hold most of an exposition's memory. Marks keep
	// every family.
	Families []string
}

// Counts are what became of a target's scrapes.
type Counts struct {
	Scrapes  int          // scrapes that answered, periodic and marks
	Failures map[Kind]int // scrapes that failed, by kind
	// Skipped counts the intervals a periodic scrape was not started
	// because the previous one was still running.
	Skipped int
}

// Mark is a snapshot of a target taken when the run asked, under a name:
// Err is set when the scrape failed.
type Mark struct {
	Name     string
	Snapshot Snapshot
	Err      *ScrapeError
}

// TargetResult is what a Scraper read of one target.
type TargetResult struct {
	Target Target
	// Series are the target's snapshots in time order, periodic and
	// marks, at most Config.MaxPoints of them plus the marks.
	Series []Snapshot
	// Stride is how many intervals one periodic point of Series stands
	// for: 1 until the series reached its bound, doubled each time it was
	// thinned.
	Stride int
	Marks  []Mark
	Counts
	// LastError is the last failed scrape's error, nil when none failed.
	LastError *ScrapeError
}

// Mark returns the snapshot of the last mark named name; false when
// there is none or its scrape failed.
func (r TargetResult) Mark(name string) (Snapshot, bool) {
	for i := len(r.Marks) - 1; i >= 0; i-- {
		if r.Marks[i].Name == name {
			return r.Marks[i].Snapshot, r.Marks[i].Err == nil
		}
	}
	return Snapshot{}, false
}

// Scraper reads its targets on an interval, each from a goroutine of its
// own, until Stop. A target that is slow, hangs or answers garbage delays
// no other target and no caller: a scrape is bounded by its timeout, and
// an interval that comes while the target's previous scrape still runs is
// skipped and counted, not queued. The first periodic scrape comes one
// interval after Start; a Mark scrapes at once.
type Scraper struct {
	cfg     Config
	ctx     context.Context
	cancel  context.CancelFunc
	targets []*targetState

	mu      sync.Mutex // guards stopped and the adding to work
	stopped bool
	work    sync.WaitGroup

	stopOnce sync.Once
	result   []TargetResult
}

// targetState is one target's scrapes so far.
type targetState struct {
	target Target
	busy   chan struct{} // holds a token while a periodic scrape runs

	mu        sync.Mutex
	series    series
	marks     []Mark
	counts    Counts
	lastError *ScrapeError
	// last is the last scrape that answered, and lastFailed the failure
	// of the last scrape that ended, nil when it answered: what Latest
	// reads.
	last       Snapshot
	lastFailed *ScrapeError
}

// Start checks cfg and starts reading its targets, until ctx ends or Stop
// is called. A target's URL must be http or https with a host; the error
// names the target.
func Start(ctx context.Context, cfg Config) (*Scraper, error) {
	if cfg.Interval < 0 || cfg.Timeout < 0 || cfg.MaxPoints < 0 {
		return nil, fmt.Errorf("server metrics: the interval, timeout and point bound cannot be negative (%v, %v, %d)", cfg.Interval, cfg.Timeout, cfg.MaxPoints)
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = min(DefaultTimeout, cfg.Interval)
	}
	if cfg.MaxPoints == 0 {
		cfg.MaxPoints = DefaultMaxPoints
	}
	if cfg.MaxPoints < 4 {
		return nil, fmt.Errorf("server metrics: a series must keep at least 4 points, not %d", cfg.MaxPoints)
	}
	if cfg.Client == nil {
		cfg.Client = defaultClient
	}
	s := &Scraper{cfg: cfg}
	for i, t := range cfg.Targets {
		if err := checkURL(t.URL); err != nil {
			return nil, fmt.Errorf("server metrics target %d: %w", i+1, err)
		}
		s.targets = append(s.targets, &targetState{
			target: t,
			busy:   make(chan struct{}, 1),
			series: series{max: cfg.MaxPoints, stride: 1, keep: cfg.Families},
		})
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	for _, t := range s.targets {
		s.work.Add(1)
		go s.poll(t)
	}
	return s, nil
}

// checkURL accepts an http or https URL with a host.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("invalid URL %q: the scheme must be http or https, not %q", u.Redacted(), u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("invalid URL %q: it has no host", u.Redacted())
	}
	return nil
}

// poll starts a scrape of t at each interval, unless the last one still
// runs.
func (s *Scraper) poll(t *targetState) {
	defer s.work.Done()
	ticker := time.NewTicker(s.cfg.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-ticker.C:
		}
		select {
		case t.busy <- struct{}{}:
			s.work.Add(1)
			go func() {
				defer s.work.Done()
				defer func() { <-t.busy }()
				snap, err := Scrape(s.ctx, s.cfg.Client, t.target.URL, s.cfg.Timeout)
				t.record(snap, err, "")
			}()
		default:
			t.mu.Lock()
			t.counts.Skipped++
			t.mu.Unlock()
		}
	}
}

// Mark takes a snapshot of every target now, at once, and records it
// under name; it returns when every scrape has ended, within the scrape
// timeout. The error joins the targets' failures, which are recorded and
// counted too; a Scraper that was stopped takes no mark.
func (s *Scraper) Mark(ctx context.Context, name string) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return fmt.Errorf("server metrics: mark %q: the scraper was stopped", name)
	}
	s.work.Add(1)
	s.mu.Unlock()
	defer s.work.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	errs := make([]error, len(s.targets))
	var wg sync.WaitGroup
	for i, t := range s.targets {
		wg.Go(func() {
			snap, err := Scrape(ctx, s.cfg.Client, t.target.URL, s.cfg.Timeout)
			t.record(snap, err, name)
			errs[i] = err
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// record counts a scrape's outcome and keeps its snapshot: in the series,
// and among the marks when it has a mark's name.
func (t *targetState) record(snap Snapshot, err error, mark string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var scrapeErr *ScrapeError
	errors.As(err, &scrapeErr)
	if scrapeErr != nil && scrapeErr.Kind != KindCanceled {
		if t.counts.Failures == nil {
			t.counts.Failures = map[Kind]int{}
		}
		t.counts.Failures[scrapeErr.Kind]++
		t.lastError, t.lastFailed = scrapeErr, scrapeErr
	}
	if mark != "" && (err == nil || scrapeErr.Kind != KindCanceled) {
		t.marks = append(t.marks, Mark{Name: mark, Snapshot: snap, Err: scrapeErr})
	}
	if err != nil {
		return
	}
	t.counts.Scrapes++
	t.lastFailed = nil
	if !snap.Time.Before(t.last.Time) {
		t.last = snap
	}
	if mark != "" {
		t.series.addMark(snap)
		return
	}
	t.series.addPeriodic(snap)
}

// Latest is what a target said last, while the Scraper reads on.
type Latest struct {
	Target Target
	// Snapshot is the last scrape that answered; its Time is zero when
	// none has.
	Snapshot Snapshot
	// Failed is the failure of the last scrape that ended, nil when it
	// answered.
	Failed *ScrapeError
	// Mark is the snapshot of the last mark of the name Latest was asked
	// for; MarkOK is false when there is none or its scrape failed.
	Mark   Snapshot
	MarkOK bool
}

// Latest is what each target said last, in the order of the Config's
// targets, with the snapshot of its last mark named mark. It takes each
// target's lock only to copy what its last scrapes left, never waiting
// for a scrape under way.
func (s *Scraper) Latest(mark string) []Latest {
	out := make([]Latest, len(s.targets))
	for i, t := range s.targets {
		t.mu.Lock()
		out[i] = Latest{Target: t.target, Snapshot: t.last, Failed: t.lastFailed}
		out[i].Mark, out[i].MarkOK = TargetResult{Marks: t.marks}.Mark(mark)
		t.mu.Unlock()
	}
	return out
}

// Stop ends the scrapes (one that still runs is canceled and not
// counted) and returns what each target gave, in the order of the
// Config's targets. Calling it again returns the same.
func (s *Scraper) Stop() []TargetResult {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
		s.cancel()
		s.work.Wait()
		for _, t := range s.targets {
			t.mu.Lock()
			counts := t.counts
			counts.Failures = maps.Clone(t.counts.Failures)
			s.result = append(s.result, TargetResult{
				Target:    t.target,
				Series:    t.series.snapshots(),
				Stride:    t.series.stride,
				Marks:     slices.Clone(t.marks),
				Counts:    counts,
				LastError: t.lastError,
			})
			t.mu.Unlock()
		}
	})
	return s.result
}

// series is a target's snapshots in time order, bounded: when it holds
// max periodic points, every other one is dropped and only one periodic
// scrape in stride (doubled) is kept from then on, so that the points
// stay evenly spaced. Marks are never dropped.
type series struct {
	points   []point
	max      int
	stride   int
	offered  int      // periodic scrapes offered so far
	periodic int      // periodic points held
	keep     []string // the families kept of a periodic scrape; nil: all
	shared   interner // what the points repeat, held once
}

// point is a snapshot of a series, with the number of its periodic
// scrape (counted from 0), or -1 for a mark's.
type point struct {
	Snapshot
	index int
}

// addPeriodic adds a periodic scrape's snapshot, if the stride keeps it.
func (s *series) addPeriodic(snap Snapshot) {
	index := s.offered
	s.offered++
	if index%s.stride != 0 {
		return
	}
	snap = s.shared.point(snap, s.keep)
	s.insert(point{Snapshot: snap, index: index})
	s.periodic++
	if s.periodic >= s.max {
		s.thin()
	}
}

// addMark adds a mark's snapshot, whole.
func (s *series) addMark(snap Snapshot) {
	s.insert(point{Snapshot: snap, index: -1})
}

// insert puts p in its place in time: a periodic scrape and a mark may
// end in either order.
func (s *series) insert(p point) {
	i := sort.Search(len(s.points), func(i int) bool { return s.points[i].Time.After(p.Time) })
	s.points = slices.Insert(s.points, i, p)
}

// thin drops every other periodic point and doubles the stride.
func (s *series) thin() {
	s.stride *= 2
	kept := s.points[:0]
	s.periodic = 0
	for _, p := range s.points {
		if p.index >= 0 {
			if p.index%s.stride != 0 {
				continue
			}
			s.periodic++
		}
		kept = append(kept, p)
	}
	clear(s.points[len(kept):])
	s.points = kept
}

// snapshots is a copy of the series' snapshots.
func (s *series) snapshots() []Snapshot {
	out := make([]Snapshot, len(s.points))
	for i, p := range s.points {
		out[i] = p.Snapshot
	}
	return out
}
