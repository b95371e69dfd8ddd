package engine

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// searchedMix is a workload of two arrival-rate scenarios, 3 and 1
// iterations a second: a mix of three to one.
const searchedMix = `
import { sleep } from 'llmrun';
const at = (rate) => ({ executor: 'constant-arrival-rate', rate, duration: '10s', preAllocatedVUs: 1, maxVUs: 20, gracefulStop: '1h' });
export const options = { scenarios: { chat: at(3), rag: at(1) } };
export default function () { sleep(0.1); }
`

// A search runs its rounds one after another, each scenario at its share
// of the round's level (the mix kept), tagged with the level; a round at
// a level already run continues it under the same names; the VUs of one
// round serve the next.
func TestSearchRunsRoundsKeepingTheMix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := load(t, testConfig(t, searchedMix, nil, nil))
		rounds := []Round{{Level: 4, Duration: 2 * time.Second}, {Level: 8, Duration: 2 * time.Second}, {Level: 8, Duration: 2 * time.Second}}
		var seen [][]string
		err := e.SetSearch(&Search{Variable: "rate", Next: func(sofar *Report) (Round, bool) {
			seen = append(seen, names(sofar.Rounds))
			if len(seen) > len(rounds) {
				return Round{}, false
			}
			return rounds[len(seen)-1], true
		}})
		if err != nil {
			t.Fatal(err)
		}
		rep := mustRun(t, e)
		want := []string{"chat@4", "rag@4", "chat@8", "rag@8"}
		if got := names(rep.Rounds); !slices.Equal(got, want) {
			t.Fatalf("rounds %v, want %v", got, want)
		}
		if !slices.Equal(seen[1], want[:2]) || !slices.Equal(seen[3], want) {
			t.Errorf("Next saw the rounds %v: want those that ended each time", seen)
		}
		for _, c := range []struct {
			name, level string
			iterations  int64
		}{
			// 3/4 and 1/4 of 4 a second for 2 s; of 8 a second for 2 × 2 s.
			{"chat@4", "4", 6}, {"rag@4", "4", 2}, {"chat@8", "8", 24}, {"rag@8", "8", 8},
		} {
			if n := count(rep, "iterations", tags("scenario", c.name)); n != c.iterations {
				t.Errorf("%s ran %d iterations, want %d", c.name, n, c.iterations)
			}
			i := slices.IndexFunc(rep.Rounds, func(sc Scenario) bool { return sc.Name == c.name })
			if tag := rep.Rounds[i].Tags["rate"]; tag != c.level {
				t.Errorf("%s tagged rate=%q, want %q", c.name, tag, c.level)
			}
		}
		if w4, w8 := rep.Windows["chat@4"], rep.Windows["chat@8"]; w8.Start.Before(w4.End) || w8.Duration() < 4*time.Second {
			t.Errorf("level 8 ran %v after level 4's %v: want after it, its two rounds in one window", w8, w4)
		}
		if rep.Duration() >= time.Hour {
			t.Errorf("the search lasted %s: a round waited out its graceful stop", rep.Duration())
		}
		// At 6 a second, iterations of 100 ms need one VU at a time,
		// two at most; each round hands the last one's on.
		if n := e.nextVUID.Load(); n > 6 {
			t.Errorf("%d VUs made: the rounds did not share their VUs", n)
		}
	})
}

func TestSetSearchRefusesWhatItCannotScale(t *testing.T) {
	tests := []struct {
		name, script, variable, field string
	}{
		{"a concurrency search of arrival-rate scenarios", searchedMix, "concurrency", "options.scenarios.chat.executor"},
		{"an unknown variable", searchedMix, "users", "options.capacity.search.variable"},
		{"a ramping scenario", `export const options = { scenarios: { up: { executor: 'ramping-vus', stages: [{ duration: '1s', target: 2 }] } } };
export default function () {}`, "concurrency", "options.scenarios.up.executor"},
		{"a chained scenario", `export const options = { scenarios: {
  a: { executor: 'constant-vus', vus: 1, duration: '1s' },
  b: { executor: 'constant-vus', vus: 1, duration: '1s', startAfter: 'a' } } };
export default function () {}`, "concurrency", "options.scenarios.b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := load(t, testConfig(t, tt.script, nil, nil))
			err := e.SetSearch(&Search{Variable: tt.variable, Next: func(*Report) (Round, bool) { return Round{}, false }})
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Errorf("error %v, want a ConfigError on %s", err, tt.field)
			}
		})
	}
}

// A round's name and tag carry its level in full, so that the level read
// back from them is the level run, however many digits it has.
func TestRoundTagIsTheLevelRun(t *testing.T) {
	e := load(t, testConfig(t, searchedMix, nil, nil))
	if err := e.SetSearch(&Search{Variable: "rate", Next: func(*Report) (Round, bool) { return Round{}, false }}); err != nil {
		t.Fatal(err)
	}
	for _, level := range []float64{1.234567, 83.36, 1.0000001, 123456.5} {
		sc, err := e.roundScenario(0, Round{Level: level, Duration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := strconv.ParseFloat(sc.Tags["rate"], 64); err != nil || got != level {
			t.Errorf("level %v tagged rate=%q", level, sc.Tags["rate"])
		}
		if want := "chat@" + sc.Tags["rate"]; sc.Name != want {
			t.Errorf("level %v named %q, want %q", level, sc.Name, want)
		}
	}
}

// While a round runs, Progress says which: its number, level, time and
// length; between rounds and after, none.
func TestSearchProgressNamesTheRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := load(t, testConfig(t, searchedMix, nil, nil))
		rounds := []Round{{Level: 4, Duration: 2 * time.Second}, {Level: 8, Duration: 2 * time.Second}}
		n := 0
		if err := e.SetSearch(&Search{Variable: "rate", Next: func(*Report) (Round, bool) {
			if r := e.Progress().Round; r != nil {
				t.Errorf("between rounds, Progress says round %+v", r)
			}
			n++
			if n > len(rounds) {
				return Round{}, false
			}
			return rounds[n-1], true
		}}); err != nil {
			t.Fatal(err)
		}
		read := make(chan *RoundProgress, 1)
		go func() {
			time.Sleep(3 * time.Second) // a second into the second round, on the bubble's clock
			read <- e.Progress().Round
		}()
		mustRun(t, e)
		want := RoundProgress{Variable: "rate", Number: 2, Level: 8, Elapsed: time.Second, Duration: 2 * time.Second}
		if got := <-read; got == nil || *got != want {
			t.Errorf("Progress during the second round says %+v, want %+v", got, want)
		}
	})
}
