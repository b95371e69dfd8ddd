package influxdb

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/summary"
)

// serverHistorySlack is how long before the oldest run's llm_run point
// ServerHistory looks for its llm_server points: both are at the run's
// start, which the two may take from clocks read a moment apart.
const serverHistorySlack = time.Hour

// windowStats are the statistics of a window figure as llm_server fields
// name them (F_mean, ...), with where each goes.
var windowStats = map[string]func(*summary.WindowFigure) **float64{
	"mean": func(f *summary.WindowFigure) **float64 { return &f.Mean }, "max": func(f *summary.WindowFigure) **float64 { return &f.Max },
	"delta": func(f *summary.WindowFigure) **float64 { return &f.Delta }, "p50": func(f *summary.WindowFigure) **float64 { return &f.P50 },
	"p90": func(f *summary.WindowFigure) **float64 { return &f.P90 }, "p99": func(f *summary.WindowFigure) **float64 { return &f.P99 },
	"count": func(f *summary.WindowFigure) **float64 { return &f.Count }, "sum": func(f *summary.WindowFigure) **float64 { return &f.Sum },
}

// ServerHistoryQuery returns the InfluxQL statement ServerHistory runs:
// the llm_server points of testID's runs of runIDs, stored from time from
// on.
func ServerHistoryQuery(testID string, runIDs []string, from time.Time) string {
	ids := make([]string, len(runIDs))
	for i, id := range runIDs {
		ids[i] = fmt.Sprintf("%s = %s", influxQLIdent("run_id"), influxQLString(id))
	}
	return fmt.Sprintf("SELECT * FROM %s WHERE %s = %s AND (%s) AND time >= %s", influxQLIdent(mServer), influxQLIdent("testid"),
		influxQLString(testID), strings.Join(ids, " OR "), influxQLString(from.UTC().Format(time.RFC3339Nano)))
}

// ServerHistory reads back the server sections of runs (History's
// records of testID) from their llm_server points, one InfluxQL query:
// per run_id, the targets of its section as a result file holds them,
// with what trend judges of them: each window figure's statistics, the
// prefix-cache hit rate, the energy, a GPU target's figures as its
// total's (its GPUs' own points and the section's _all point left out).
// A run without llm_server points (no server section, or stored before
// llmrun wrote them) has none.
func ServerHistory(ctx context.Context, cfg Config, testID string, runs []RunRecord) (map[string][]summary.ServerTarget, error) {
	out := map[string][]summary.ServerTarget{}
	if len(runs) == 0 {
		return out, nil
	}
	ids := make([]string, len(runs))
	oldest := runs[0].Time
	for i, r := range runs {
		ids[i] = r.RunID
		if r.Time.Before(oldest) {
			oldest = r.Time
		}
	}
	found, err := influxQL(ctx, cfg, ServerHistoryQuery(testID, ids, oldest.Add(-serverHistorySlack)))
	if err != nil {
		return nil, err
	}
	for _, s := range found {
		for _, row := range s.Values {
			runID, t, ok, err := serverTarget(s.Columns, row)
			if err != nil {
				db, _ := cfg.queryTarget()
				return nil, fmt.Errorf("influxdb %s: reading the llm_server points of database %q: %w", cfg.URL, db, err)
			}
			if ok {
				out[runID] = append(out[runID], t)
			}
		}
	}
	for _, ts := range out {
		slices.SortFunc(ts, func(a, b summary.ServerTarget) int {
			return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.URL, b.URL))
		})
	}
	return out, nil
}

// serverTarget reads a target of a run from a row of SELECT * FROM
// llm_server: false for the point of one of its GPUs or of the whole
// section (target _all).
func serverTarget(columns []string, values []any) (runID string, t summary.ServerTarget, ok bool, err error) {
	if len(values) != len(columns) {
		return "", t, false, fmt.Errorf("a row of %d values for %d columns", len(values), len(columns))
	}
	t.Figures = map[string]summary.WindowFigure{}
	var gpu string
	var energy summary.Energy
	hasEnergy := false
	for i, col := range columns {
		switch v := values[i].(type) {
		case string:
			for name, p := range map[string]*string{"run_id": &runID, "target": &t.URL, "kind": &t.Kind, "engine": &t.Engine,
				"instance": &t.Instance, "gpu": &gpu, "version": &t.Version, "energy_method": &energy.Method} {
				if col == name {
					*p = v
				}
			}
		case json.Number:
			n, err := v.Float64()
			if err != nil {
				return "", t, false, fmt.Errorf("field %s: %w", col, err)
			}
			switch col {
			case "prefix_cache_hit_rate":
				t.PrefixCacheHitRate = &n
			case "energy_joules":
				energy.Joules, hasEnergy = n, true
			default:
				windowStat(t.Figures, col, n)
			}
		}
	}
	if gpu != "" || t.URL == allTargets || t.URL == "" {
		return runID, t, false, nil
	}
	if hasEnergy {
		t.Energy = &energy
	}
	if t.Kind == summary.TargetGPU {
		t.GPUTotal = &summary.GPU{Figures: t.Figures}
	}
	return runID, t, true, nil
}

// windowStat sets the statistic of a field named F_STAT (STAT one of
// windowStats) in figure F of figures; other fields are not a window
// figure's.
func windowStat(figures map[string]summary.WindowFigure, field string, v float64) {
	i := strings.LastIndexByte(field, '_')
	if i <= 0 {
		return
	}
	at, ok := windowStats[field[i+1:]]
	if !ok || strings.HasPrefix(field, "scrapes_") {
		return
	}
	name := field[:i]
	f := figures[name]
	*at(&f) = &v
	figures[name] = f
}
