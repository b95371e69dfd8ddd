package results

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Query is what Trend reads of a test's runs stored in InfluxDB (the
// runs the filter selects) and how it judges the newest against the
// median of those before it.
type Query struct {
	influxdb.Filter
	Gate Gate
}

// reservedTags are the tags Filter.Tags may not name: trend selects by
// them with flags of their own, or reads them together.
var reservedTags = map[string]string{
	"testid": "select it with --testid", "model": "select it with --model", "scenario": "select it with --scenario",
	"run_id": "trend compares runs, which --testid selects", "instance": "trend reads the instances of a run together",
}

// Check says what is wrong with the query before anything is read: a
// server figure judged on a scenario (a server section is the whole
// run's), or a tag the query selects by otherwise.
func (q Query) Check() error {
	if err := checkScenarioFigures(q.Gate.Figures, q.Scenario); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(q.Tags)) {
		if instead, ok := reservedTags[k]; ok {
			return fmt.Errorf("--tag %s=%s: %s is not a tag --tag selects by: %s", k, q.Tags[k], k, instead)
		}
	}
	return nil
}

// TrendReport is the newest run of a test judged against the runs before
// it.
type TrendReport struct {
	// Report is the judgement; its Title is the caller's to set.
	regression.Report
	// Notes say of each run of several instances how many it had and
	// which are missing.
	Notes []string
	// LeftOut are the runs of several instances that could not be
	// gathered, and why.
	LeftOut []error
}

// NoRunsError is Trend's error when InfluxDB holds no run the query
// selects (Hints say what it holds, and the nearest), or none of those it
// holds could be read (Unreadable).
type NoRunsError struct {
	Unreadable bool
	Hints      []string
}

func (e *NoRunsError) Error() string {
	if e.Unreadable {
		return "no run stored could be read"
	}
	return "no run stored matches"
}

// Trend reads the runs q selects from InfluxDB, newest first, and judges
// the newest against the median of the others: the client's figures, and
// the server's where the runs stored them. A run of several instances is
// judged on their results merged.
func Trend(ctx context.Context, cfg influxdb.Config, q Query) (TrendReport, error) {
	records, err := influxdb.History(ctx, cfg, q.Filter)
	if err != nil {
		return TrendReport{}, err
	}
	if len(records) == 0 {
		hints, err := influxdb.MissReport(ctx, cfg, q.Filter)
		if err != nil {
			hints = []string{fmt.Sprintf("what the server holds could not be listed: %v", err)}
		}
		return TrendReport{}, &NoRunsError{Hints: hints}
	}
	stored, err := storedServers(ctx, cfg, q, records)
	if err != nil {
		return TrendReport{}, err
	}
	var t TrendReport
	var runs []regression.Run
	var sides []regression.ServerSide
	for _, r := range records {
		run, side, note, err := readRun(ctx, cfg, r, stored[r.RunID], q.Scenario)
		if err != nil {
			t.LeftOut = append(t.LeftOut, fmt.Errorf("run %s left out: %w", r.RunID, err))
			continue
		}
		if note != "" {
			t.Notes = append(t.Notes, note)
		}
		runs, sides = append(runs, run), append(sides, side)
	}
	if len(runs) == 0 {
		return t, &NoRunsError{Unreadable: true}
	}
	figures := q.Gate.Figures
	if q.Scenario == "" {
		// At the level the llm_run points store their intervals at, which
		// Compare rescales to the gate's confidence as it does theirs.
		figures = regression.AddServerFigures(figures, q.Gate.DefaultFigures, sides, runs, regression.DefaultConfidence)
	}
	t.Report = q.Gate.report(runs, figures)
	return t, nil
}

// readRun is the run of record r, with the server targets stored of it:
// a run of several instances gathered from their results, with a note
// saying so.
func readRun(ctx context.Context, cfg influxdb.Config, r influxdb.RunRecord, targets []summary.ServerTarget, scenario string) (regression.Run, regression.ServerSide, string, error) {
	side := regression.ServerSide{Targets: targets}
	var note string
	if r.Distributed() {
		var err error
		if r, side.Targets, note, err = GatherRun(ctx, cfg, r, scenario); err != nil {
			return regression.Run{}, side, "", err
		}
	}
	side.OutputTokens = int64(r.Fields["output_tokens"])
	run := regression.Run{ID: r.RunID, Time: r.Time, Version: r.Version, Health: r.Health}
	run.Figures, run.Confidence = regression.FromFields(r.Fields)
	return run, side, note, nil
}

// GatherRun rebuilds the record of a run of several instances from their
// results stored in InfluxDB, merged as llmrun merge merges them: its
// figures (of scenario, or of the whole run when "") are those one
// process running the whole plan would have stored. It returns the
// merged result's server targets, and a note saying how many instances
// the run had and which are missing.
func GatherRun(ctx context.Context, cfg influxdb.Config, r influxdb.RunRecord, scenario string) (influxdb.RunRecord, []summary.ServerTarget, string, error) {
	set, err := Source{Influx: cfg, RunID: r.RunID}.Read(ctx)
	if err != nil {
		return r, nil, "", err
	}
	merged, err := set.Merge()
	if err != nil {
		return r, nil, "", err
	}
	fields, ok := influxdb.RunFields(merged, scenario)
	if !ok {
		return r, nil, "", fmt.Errorf("its merged result has no scenario %q", scenario)
	}
	r.Fields, r.Version, r.Health = fields, merged.Meta.Version, regression.HealthOf(merged.Client)
	m := merged.Meta
	note := fmt.Sprintf("run %s: %s, figures of their results merged", r.RunID, textfmt.Count(m.Instances, "instance"))
	if len(m.MissingInstances) > 0 {
		note += fmt.Sprintf(" (%s missing: no result stored)", InstanceList(m.MissingInstances))
	}
	return r, regression.SideOf(merged).Targets, note, nil
}

// storedServers reads back the server sections of the runs of records
// (their llm_server points) by run_id, when the query judges server
// figures: of the whole runs (a server section is the whole run's, not a
// scenario's), by default or when its figures name one.
func storedServers(ctx context.Context, cfg influxdb.Config, q Query, records []influxdb.RunRecord) (map[string][]summary.ServerTarget, error) {
	if q.Scenario != "" || !q.Gate.DefaultFigures && !slices.ContainsFunc(q.Gate.Figures, regression.Figure.Server) {
		return nil, nil
	}
	return influxdb.ServerHistory(ctx, cfg, q.TestID, records)
}

// maxSinceDays bounds a period to a century.
const maxSinceDays = 36500

// ParseSince parses how far back to look for runs: a number of days
// ("365d") or weeks ("12w"), or a Go duration ("48h").
func ParseSince(s string) (time.Duration, error) {
	day := 24 * time.Hour
	var d time.Duration
	switch unit := strings.TrimLeft(s, "0123456789"); unit {
	case "d", "w":
		days, err := strconv.Atoi(strings.TrimSuffix(s, unit))
		if err == nil && unit == "w" && days <= maxSinceDays {
			days *= 7
		}
		if err != nil || days > maxSinceDays {
			return 0, fmt.Errorf("%q: want a number of days or weeks up to %d days", s, maxSinceDays)
		}
		d = time.Duration(days) * day
	default:
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q: want days (90d), weeks (12w) or a duration (48h)", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: want a positive period", s)
	}
	return d, nil
}

// FileRunID names the i-th result file TrendFiles reads (from 0) in its
// tables, whose run column is too narrow for a file's name: "#1", "#2", ...
func FileRunID(i int) string { return "#" + strconv.Itoa(i+1) }

// TrendFiles reads result files (ReadResult: llmrun's, vLLM's or
// SGLang's), oldest first, and judges the newest, the last, against the
// median of the others by g, as Trend judges the runs InfluxDB holds: the
// whole runs' client figures, or with scenario that scenario's.
func TrendFiles(files []string, scenario string, g Gate) (TrendReport, error) {
	if err := checkScenarioFigures(g.Figures, scenario); err != nil {
		return TrendReport{}, err
	}
	runs := make([]regression.Run, len(files))
	for i, file := range files {
		s, err := ReadResult(file)
		if err != nil {
			return TrendReport{}, err
		}
		run := Run(s, g.Options.Confidence)
		if scenario != "" {
			block, err := scenarioBlock(file, s, scenario)
			if err != nil {
				return TrendReport{}, err
			}
			run.Figures = regression.Estimates(block, g.Options.Confidence)
		}
		run.ID = FileRunID(i)
		runs[len(files)-1-i] = run
	}
	return TrendReport{Report: g.report(runs, g.Figures)}, nil
}
