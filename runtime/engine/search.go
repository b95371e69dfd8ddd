package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/executor"
)

// MaxSearchRounds bounds the rounds of a capacity search, whatever its
// Next says.
const MaxSearchRounds = 200

// Search runs the scenarios as a capacity search (options.capacity.search):
// rounds one after another, each running every scenario at a share of one
// total level of load, keeping the mix the script declares. Set it with
// Engine.SetSearch after Load.
type Search struct {
	// Variable is what a level counts, "rate" (requests per second, the
	// sum of the arrival-rate scenarios' rates) or "concurrency" (the sum
	// of the constant-vus scenarios' VUs); it names the tag each round's
	// scenarios carry with the level.
	Variable string
	// Next is asked before each round, with the report so far (Rounds
	// and Windows hold the rounds that ended), for the next round; false
	// ends the search. A round at a level already run continues it: its
	// samples join the earlier ones', under the same scenario names.
	Next func(sofar *Report) (Round, bool)
}

// Round is one round of a search: every scenario at its share of Level,
// for Duration.
type Round struct {
	Level    float64
	Duration time.Duration
}

// RoundProgress is how far a capacity search's running round is: the
// Number-th round of the search, at Level of Variable, Elapsed of its
// Duration.
type RoundProgress struct {
	Variable string
	Number   int
	Level    float64
	Elapsed  time.Duration
	Duration time.Duration
}

// runningRound is the round that runs, and when it started.
type runningRound struct {
	Round
	number int
	start  time.Time
}

// RoundName is the name of scenario base's part of the round at level.
func RoundName(base string, level float64) string {
	return base + "@" + FormatLevel(level)
}

// FormatLevel writes a level as a round's name and tag carry it: the
// shortest text that reads back as exactly the level run, so that the
// level named is the level judged.
func FormatLevel(level float64) string {
	return strconv.FormatFloat(level, 'g', -1, 64)
}

// SetSearch makes the run a capacity search. Every scenario must be
// scalable (constant-arrival-rate for a rate search, constant-vus for a
// concurrency search) and start with the run; errors are *ConfigError
// naming the scenario.
func (e *Engine) SetSearch(s *Search) error {
	want := map[string]string{"rate": "constant-arrival-rate", "concurrency": "constant-vus"}[s.Variable]
	if want == "" {
		return &ConfigError{Field: "options.capacity.search.variable", Err: fmt.Errorf("%q: want 'rate' or 'concurrency'", s.Variable)}
	}
	for _, sc := range e.scenarios {
		field := "options.scenarios." + sc.Name
		cfg, ok := sc.Config.(executor.Scalable)
		switch {
		case sc.Executor != want || !ok:
			return &ConfigError{Field: field + ".executor", Err: fmt.Errorf("%q: a %s search scales %s scenarios only", sc.Executor, s.Variable, want)}
		case sc.StartAfter != "" || sc.StartTime > 0:
			return &ConfigError{Field: field, Err: errors.New("a search runs its rounds one after another itself: leave startAfter and startTime out")}
		case cfg.Load() <= 0:
			return &ConfigError{Field: field, Err: errors.New("a search needs every scenario's load to be positive")}
		}
	}
	e.search = s
	return nil
}

// DeclaredLoad is the total load the scenarios declare, of those whose
// load a search scales: requests per second, or VUs.
func (e *Engine) DeclaredLoad() float64 {
	total := 0.0
	for _, sc := range e.scenarios {
		if cfg, ok := sc.Config.(executor.Scalable); ok {
			total += cfg.Load()
		}
	}
	return total
}

// roundScenario is scenario i's part of round r: its load scaled by the
// round's level over the declared total, tagged with the level; an error
// names the scenario's field when the scaled load is beyond the
// executor's limits.
func (e *Engine) roundScenario(i int, r Round) (Scenario, error) {
	sc := e.scenarios[i]
	out := sc
	out.Name = RoundName(sc.Name, r.Level)
	cfg, err := sc.Config.(executor.Scalable).Scaled(r.Level/e.DeclaredLoad(), r.Duration)
	if err != nil {
		return out, &ConfigError{Field: "options.scenarios." + sc.Name, Err: fmt.Errorf("at %s %s: %w", e.search.Variable, FormatLevel(r.Level), err)}
	}
	out.Config = cfg
	out.Tags = maps.Clone(sc.Tags)
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	out.Tags[e.search.Variable] = FormatLevel(r.Level)
	return out, nil
}

// sharedVUs are the VUs of one scenario of a search, which every round
// of it uses in turn: the rounds run one after another, so all are free
// when a round starts.
type sharedVUs struct {
	mu sync.Mutex
	// all are the VUs; handed how many the current round has been given.
	all    []*vu
	handed int
}

// runSearch runs the rounds Config's search asks for, one after another,
// and returns the rounds' windows.
func (e *Engine) runSearch(ctx context.Context, vus [][]*vu, setupJSON []byte) (map[string]Window, error) {
	shared := make([]*sharedVUs, len(e.scenarios))
	for i := range e.scenarios {
		shared[i] = &sharedVUs{all: vus[i]}
	}
	windows := map[string]Window{}
	for n := 0; n < MaxSearchRounds && ctx.Err() == nil; n++ {
		sofar := e.reportSoFar(maps.Clone(windows))
		round, ok := e.search.Next(sofar)
		if !ok || ctx.Err() != nil {
			break
		}
		if !(round.Level > 0) || round.Duration <= 0 {
			return windows, fmt.Errorf("capacity search: round %d at level %g for %s: want a positive level and duration", n+1, round.Level, round.Duration)
		}
		ends := make([]Window, len(e.scenarios))
		errs := make([]error, len(e.scenarios))
		scs := make([]Scenario, len(e.scenarios))
		for i := range e.scenarios {
			if scs[i], errs[i] = e.roundScenario(i, round); errs[i] != nil {
				return windows, fmt.Errorf("capacity search: round %d: %w", n+1, errs[i])
			}
		}
		e.round.Store(&runningRound{Round: round, number: n + 1, start: time.Now()})
		var wg sync.WaitGroup
		for i := range e.scenarios {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ends[i], errs[i] = e.runRound(ctx, i, &scs[i], shared[i], setupJSON, n == 0)
			}()
		}
		wg.Wait()
		e.round.Store(nil)
		for i, sc := range scs {
			w := ends[i]
			if before, ok := windows[sc.Name]; ok {
				w.Start = before.Start
			} else {
				e.rounds = append(e.rounds, sc)
			}
			windows[sc.Name] = w
		}
		if err := errors.Join(errs...); err != nil {
			return windows, err
		}
	}
	for _, l := range e.live {
		if l.start.Load() == 0 {
			l.notRun.Store(true)
		}
	}
	return windows, nil
}

// runRound runs scenario i's part of a round, sc, on its shared VUs, and
// returns when it ran; the first round begins the scenario's warmup.
func (e *Engine) runRound(ctx context.Context, i int, sc *Scenario, shared *sharedVUs, setupJSON []byte, first bool) (Window, error) {
	tags := metrics.NewTagSet(scenarioTags(sc, e.options.Tags))
	pre := sc.Config.PreAllocatedVUs()
	for len(shared.all) < pre {
		v, err := e.newVU(ctx, e.nextVUID.Add(1), e.envs[i])
		if err != nil {
			return Window{}, fmt.Errorf("initialising a VU for scenario %s: %w", sc.Name, err)
		}
		shared.all = append(shared.all, v)
	}
	p := &scenarioPool{e: e, sc: sc, index: i, vus: make([]executor.VU, pre), setup: setupJSON, tags: tags,
		sink: e.agg.Shard(i), live: e.live[i], shared: shared}
	for j, v := range shared.all[:pre] {
		if err := v.bind(sc, tags, setupJSON, p.live); err != nil {
			return Window{}, err
		}
		p.vus[j] = v
	}
	shared.handed = pre
	start := time.Now()
	if first {
		p.live.warmup.begin(start)
		p.live.start.Store(start.UnixNano())
	}
	err := sc.Config.NewExecutor(executor.SeedFor(e.cfg.Seed, sc.Name)).Run(ctx, p)
	end := time.Now()
	p.live.interrupted.Store(ctx.Err() != nil)
	p.live.end.Store(end.UnixNano())
	if first {
		start = p.live.warmup.measuredStart(end)
	}
	return Window{Start: start, End: end}, err
}

// spare hands out, bound to the pool's scenario, a VU of an earlier
// round that the current one has not been given yet; nil when there is
// none.
func (s *sharedVUs) spare(p *scenarioPool) (*vu, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handed >= len(s.all) {
		return nil, nil
	}
	v := s.all[s.handed]
	s.handed++
	return v, v.bind(p.sc, p.tags, p.setup, p.live)
}

// keep adds a VU made during a round to those later rounds use.
func (s *sharedVUs) keep(v *vu) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, v)
	s.handed = len(s.all)
}
