package influxdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Filter selects the runs History reads.
type Filter struct {
	// TestID is the testid tag of the runs (required).
	TestID string
	// Model, when set, keeps the runs whose model tag is exactly Model.
	Model string
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
	// Version and Target are the whole-run point's metadata fields
	// ("" on a per-scenario point).
	Version, Target string
	// Fields holds the numeric fields (integers and floats) by name.
	Fields map[string]float64
}

// History reads the llm_run points of f.TestID from the server of cfg,
// with one InfluxQL query (HistoryQuery) over the v1 /query API, which
// every InfluxDB line answers: 1.x, 2.x through a DBRP mapping, 3.x. It
// returns one record per run, newest first, at most f.Runs.
func History(ctx context.Context, cfg Config, f Filter) ([]RunRecord, error) {
	if f.TestID == "" {
		return nil, errors.New("influxdb history: no testid")
	}
	if f.Runs < 1 || f.Since <= 0 {
		return nil, fmt.Errorf("influxdb history: want at least one run over a positive period, have %s over %s", textfmt.Count(f.Runs, "run"), f.Since)
	}
	found, err := influxQL(ctx, cfg, HistoryQuery(f, time.Now()))
	if err != nil {
		return nil, err
	}
	var runs []RunRecord
	for _, s := range found {
		for _, row := range s.Values {
			r, err := runRecord(s.Columns, row)
			if err != nil {
				db, _ := cfg.queryTarget()
				return nil, fmt.Errorf("influxdb %s: reading the llm_run points of database %q: %w", cfg.URL, db, err)
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// HistoryQuery returns the InfluxQL statement History runs at now: every
// column of the llm_run points of the filter's testid, of its scenario or
// else the whole-run points (no scenario tag, which a scenario equal to
// the empty string matches), of its model when set, since now-f.Since,
// newest first, at most f.Runs.
func HistoryQuery(f Filter, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT * FROM %s WHERE %s = %s AND %s = %s", influxQLIdent("llm_run"),
		influxQLIdent("testid"), influxQLString(f.TestID), influxQLIdent("scenario"), influxQLString(f.Scenario))
	if f.Model != "" {
		fmt.Fprintf(&b, " AND %s = %s", influxQLIdent("model"), influxQLString(f.Model))
	}
	fmt.Fprintf(&b, " AND time >= %s ORDER BY time DESC LIMIT %d", influxQLString(now.Add(-f.Since).UTC().Format(time.RFC3339)), f.Runs)
	return b.String()
}

// runRecord converts a row of SELECT *: the time, the tags and metadata
// strings by name, every number as a field (booleans, other strings and
// absent values left out).
func runRecord(columns []string, values []any) (RunRecord, error) {
	if len(values) != len(columns) {
		return RunRecord{}, fmt.Errorf("a row of %d values for %d columns", len(values), len(columns))
	}
	r := RunRecord{Fields: map[string]float64{}}
	strs := map[string]*string{"run_id": &r.RunID, "model": &r.Model, "scenario": &r.Scenario, "version": &r.Version, "target": &r.Target}
	for i, col := range columns {
		if col == "time" {
			t, err := pointTime(values[i])
			if err != nil {
				return RunRecord{}, err
			}
			r.Time = t
			continue
		}
		switch v := values[i].(type) {
		case json.Number:
			n, err := v.Float64()
			if err != nil {
				return RunRecord{}, fmt.Errorf("field %s: %w", col, err)
			}
			r.Fields[col] = n
		case string:
			if p := strs[col]; p != nil {
				*p = v
			}
		}
	}
	return r, nil
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
