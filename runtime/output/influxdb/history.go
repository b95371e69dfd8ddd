package influxdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Filter selects the runs History reads.
type Filter struct {
	// TestID is the testid tag of the runs (required).
	TestID string
	// Model, when set, keeps the runs whose model tag is exactly Model.
	Model string
	// Tags keeps the runs whose points have every one of these tags (the
	// --tag pairs of llmrun run) with its value; a tag whose value is ""
	// matches the runs without it.
	Tags map[string]string
	// Scenario, when set, reads that scenario's per-scenario points;
	// when empty, the whole-run points (those without a scenario tag).
	Scenario string
	// Runs is the most runs returned, the newest.
	Runs int
	// Since is how far back runs are looked for.
	Since time.Duration
}

// RunRecord is one llm_run point: a run, or one scenario of a run.
type RunRecord struct {
	// RunID is the run_id tag.
	RunID string
	// Time is the point's time, the run's start.
	Time time.Time
	// Model is the model tag ("" when the run had none).
	Model string
	// Scenario is the scenario tag; "" on a whole-run point.
	Scenario string
	// Version and Target are the run's metadata fields: those of its
	// whole-run point, also for a scenario's record.
	Version, Target string
	// Fields holds the numeric fields (integers and floats) by name.
	Fields map[string]float64
	// Instances are the instance tags of the run's points, in order, when
	// its processes were instances of one run (--instances).
	Instances []string
	// Health is the client health the point stores (client_limited and
	// client_limit); unknown on a point stored before them.
	Health regression.Health
}

// Distributed says whether the record is of a run of several instances:
// its Fields are then those of one of them only, and the run's figures
// are those of its instances' results merged (ReadResults). It is, when
// its points carry several instance tags or say that it had several
// instances (their instances field: an instance whose companions stored
// nothing does not know it alone).
func (r RunRecord) Distributed() bool {
	return len(r.Instances) > 1 || r.Fields["instances"] > 1
}

// maxPointsPerRun bounds the llm_run points History reads per run it
// returns: the instances of one run it can see together.
const maxPointsPerRun = 1024

// History reads the llm_run points of f.TestID from the server of cfg,
// with an InfluxQL query (HistoryQuery) over the v1 /query API, which
// every InfluxDB line answers: 1.x, 2.x through a DBRP mapping, 3.x. It
// returns one record per run, newest first, at most f.Runs: the points of
// a run's instances, which share its run_id, are one record. When they
// take more than f.Runs points, it asks again for more.
func History(ctx context.Context, cfg Config, f Filter) ([]RunRecord, error) {
	if f.TestID == "" {
		return nil, errors.New("influxdb history: no testid")
	}
	if f.Runs < 1 || f.Since <= 0 {
		return nil, fmt.Errorf("influxdb history: want at least one run over a positive period, have %s over %s", textfmt.Count(f.Runs, "run"), f.Since)
	}
	now := time.Now()
	for limit := f.Runs; ; limit *= 4 {
		runs, points, err := history(ctx, cfg, historyQuery(f, now, limit))
		if err != nil {
			return nil, err
		}
		if len(runs) >= f.Runs || points < limit || limit >= f.Runs*maxPointsPerRun {
			runs = runs[:min(len(runs), f.Runs)]
			if f.Scenario != "" {
				err = addRunMetadata(ctx, cfg, f, runs)
			}
			return runs, err
		}
	}
}

// addRunMetadata sets the version and target of the scenario records
// runs (newest first) from their runs' whole-run points, which alone
// store them: one query of the whole-run points of f's runs over the
// times of runs.
func addRunMetadata(ctx context.Context, cfg Config, f Filter, runs []RunRecord) error {
	if len(runs) == 0 {
		return nil
	}
	whole := f
	whole.Scenario = ""
	stmt := fmt.Sprintf("SELECT %s, %s, %s FROM %s WHERE %s AND time <= %s", influxQLIdent("version"), influxQLIdent("target"),
		influxQLIdent("run_id"), influxQLIdent(mRun), whole.conditions(runs[len(runs)-1].Time), influxQLString(runs[0].Time.UTC().Format(time.RFC3339Nano)))
	found, err := influxQL(ctx, cfg, stmt)
	if err != nil {
		return err
	}
	byID := map[string]RunRecord{}
	for _, s := range found {
		for _, row := range s.Values {
			r, _, err := runRecord(s.Columns, row)
			if err != nil {
				db, _ := cfg.queryTarget()
				return fmt.Errorf("influxdb %s: reading the whole-run llm_run points of database %q: %w", cfg.URL, db, err)
			}
			byID[r.RunID] = r
		}
	}
	for i := range runs {
		if w, ok := byID[runs[i].RunID]; ok {
			runs[i].Version, runs[i].Target = w.Version, w.Target
		}
	}
	return nil
}

// history runs a query of llm_run points and returns them as one record
// per run_id, in the order of their first points, and how many points
// it read.
func history(ctx context.Context, cfg Config, stmt string) ([]RunRecord, int, error) {
	found, err := influxQL(ctx, cfg, stmt)
	if errors.Is(err, errAnswerTooLarge) {
		return nil, 0, fmt.Errorf("%w (read fewer runs: a shorter --since or fewer --runs)", err)
	}
	if err != nil {
		return nil, 0, err
	}
	var runs []RunRecord
	byID := map[string]int{}
	points := 0
	for _, s := range found {
		for _, row := range s.Values {
			r, instance, err := runRecord(s.Columns, row)
			if err != nil {
				db, _ := cfg.queryTarget()
				return nil, 0, fmt.Errorf("influxdb %s: reading the llm_run points of database %q: %w", cfg.URL, db, err)
			}
			points++
			i, seen := byID[r.RunID]
			if !seen {
				i, byID[r.RunID] = len(runs), len(runs)
				runs = append(runs, r)
			}
			if instance != "" && !slices.Contains(runs[i].Instances, instance) {
				runs[i].Instances = append(runs[i].Instances, instance)
			}
		}
	}
	for i := range runs {
		slices.SortFunc(runs[i].Instances, compareInstances)
	}
	return runs, points, nil
}

// HistoryQuery returns the InfluxQL statement History runs at now: every
// column of the llm_run points of the filter's testid, of its scenario or
// else the whole-run points (no scenario tag, which a scenario equal to
// the empty string matches), of its model when set, with its tags, since
// now-f.Since, newest first, at most f.Runs; History asks for more points
// when the runs have several instances.
func HistoryQuery(f Filter, now time.Time) string {
	return historyQuery(f, now, f.Runs)
}

// historyQuery is HistoryQuery for at most limit points.
func historyQuery(f Filter, now time.Time, limit int) string {
	return fmt.Sprintf("SELECT * FROM %s WHERE %s ORDER BY time DESC LIMIT %d", influxQLIdent(mRun), f.conditions(now.Add(-f.Since)), limit)
}

// conditions are the WHERE conditions of f's llm_run points stored from
// time from on: its testid, its scenario (or none), its model when set,
// its tags (as tags, in the order of their keys).
func (f Filter) conditions(from time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s = %s AND %s = %s", influxQLIdent("testid"), influxQLString(f.TestID), influxQLIdent("scenario"), influxQLString(f.Scenario))
	if f.Model != "" {
		fmt.Fprintf(&b, " AND %s = %s", influxQLIdent("model"), influxQLString(f.Model))
	}
	for _, k := range slices.Sorted(maps.Keys(f.Tags)) {
		fmt.Fprintf(&b, " AND %s = %s", influxQLTag(k), influxQLString(f.Tags[k]))
	}
	fmt.Fprintf(&b, " AND time >= %s", influxQLString(from.UTC().Format(time.RFC3339)))
	return b.String()
}

// runRecord converts a row of SELECT *: the time, the tags and metadata
// strings by name, every number as a field, the client's health
// (booleans, other strings and absent values left out); and the point's
// instance tag.
func runRecord(columns []string, values []any) (r RunRecord, instance string, err error) {
	if len(values) != len(columns) {
		return RunRecord{}, "", fmt.Errorf("a row of %d values for %d columns", len(values), len(columns))
	}
	r = RunRecord{Fields: map[string]float64{}}
	limited := false
	strs := map[string]*string{"run_id": &r.RunID, "model": &r.Model, "scenario": &r.Scenario, "version": &r.Version, "target": &r.Target,
		"instance": &instance, "client_limit": &r.Health.Limit}
	for i, col := range columns {
		if col == "time" {
			t, err := pointTime(values[i])
			if err != nil {
				return RunRecord{}, "", err
			}
			r.Time = t
			continue
		}
		switch v := values[i].(type) {
		case json.Number:
			n, err := v.Float64()
			if err != nil {
				return RunRecord{}, "", fmt.Errorf("field %s: %w", col, err)
			}
			r.Fields[col] = n
		case string:
			if p := strs[col]; p != nil {
				*p = v
			}
		case bool:
			if col == "client_limited" {
				r.Health.Known = true
				limited = v
			}
		}
	}
	switch {
	case !limited:
		r.Health.Limit = ""
	case r.Health.Limit == "":
		r.Health.Limit = "a limit not stored"
	}
	return r, instance, nil
}

// RunFields are the numeric fields of the llm_run point a run of summary
// s stores: the whole run's, or with a scenario that scenario's (false
// when the run stores none for it). They are the figures History reads,
// for a summary merged from the results of a run's instances.
func RunFields(s *summary.Summary, scenario string) (map[string]float64, bool) {
	for _, p := range runPoints(s, runTags{}, s.Meta.Start, nil) {
		name := ""
		for _, t := range p.TagList() {
			if t.Key == "scenario" {
				name = t.Value
			}
		}
		if name != scenario {
			continue
		}
		fields := map[string]float64{}
		for _, f := range p.FieldList() {
			switch v := f.Value.(type) {
			case int64:
				fields[f.Key] = float64(v)
			case uint64:
				fields[f.Key] = float64(v)
			case float64:
				fields[f.Key] = v
			}
		}
		return fields, true
	}
	return nil, false
}

// pointTime reads a time column: epoch nanoseconds as asked, or RFC 3339
// from a server that ignores epoch.
func pointTime(v any) (time.Time, error) {
	switch t := v.(type) {
	case json.Number:
		ns, err := t.Int64()
		if err != nil {
			return time.Time{}, fmt.Errorf("time %s: %w", t, err)
		}
		return time.Unix(0, ns).UTC(), nil
	case string:
		return time.Parse(time.RFC3339Nano, t)
	default:
		return time.Time{}, fmt.Errorf("time %v: want epoch nanoseconds or RFC 3339", v)
	}
}
