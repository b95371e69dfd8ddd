package influxdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	ihttp "github.com/influxdata/influxdb-client-go/v2/api/http"
	"github.com/influxdata/influxdb-client-go/v2/api/query"
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
// with one Flux query run through the v2 query API (InfluxDB 2.x/3.x, or
// 1.8+ with flux-enabled), and returns one record per run, newest first, at
// most f.Runs.
func History(ctx context.Context, cfg Config, f Filter) ([]RunRecord, error) {
	if f.TestID == "" {
		return nil, errors.New("influxdb history: no testid")
	}
	if f.Runs < 1 || f.Since <= 0 {
		return nil, fmt.Errorf("influxdb history: want at least one run over a positive period, have %d runs over %s", f.Runs, f.Since)
	}
	client := cfg.NewClient()
	defer client.Close()
	flux := HistoryQuery(cfg.Bucket, f, time.Now())
	res, err := client.QueryAPI(cfg.Org).Query(ctx, flux)
	if err != nil {
		return nil, queryError(cfg, err)
	}
	defer res.Close()
	var runs []RunRecord
	for res.Next() {
		runs = append(runs, runRecord(res.Record()))
	}
	if err := res.Err(); err != nil {
		return nil, queryError(cfg, err)
	}
	return runs, nil
}

// HistoryQuery returns the Flux query History runs at now: the llm_run
// points of the filter's testid (and model, and scenario or else the
// whole-run points) since now-f.Since, their fields pivoted into one row
// per run, newest first, at most f.Runs rows.
func HistoryQuery(bucket string, f Filter, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "from(bucket: %s)\n", fluxString(bucket))
	fmt.Fprintf(&b, "  |> range(start: %s)\n", now.Add(-f.Since).UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "  |> filter(fn: (r) => r._measurement == \"llm_run\" and r.testid == %s)\n", fluxString(f.TestID))
	if f.Scenario != "" {
		fmt.Fprintf(&b, "  |> filter(fn: (r) => r.scenario == %s)\n", fluxString(f.Scenario))
	} else {
		b.WriteString("  |> filter(fn: (r) => not exists r.scenario)\n")
	}
	if f.Model != "" {
		fmt.Fprintf(&b, "  |> filter(fn: (r) => r.model == %s)\n", fluxString(f.Model))
	}
	b.WriteString("  |> pivot(rowKey: [\"_time\"], columnKey: [\"_field\"], valueColumn: \"_value\")\n")
	b.WriteString("  |> group()\n")
	b.WriteString("  |> sort(columns: [\"_time\"], desc: true)\n")
	fmt.Fprintf(&b, "  |> limit(n: %d)\n", f.Runs)
	return b.String()
}

// fluxString quotes s as a Flux string literal, escaping what would end it
// or be interpolated.
func fluxString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "${", `\${`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// runRecord converts a pivoted row: the tags and metadata strings by name,
// every numeric column but Flux's own (_start, table, …) as a field.
func runRecord(rec *query.FluxRecord) RunRecord {
	str := func(k string) string {
		s, _ := rec.ValueByKey(k).(string)
		return s
	}
	r := RunRecord{RunID: str("run_id"), Time: rec.Time(), Model: str("model"), Scenario: str("scenario"),
		Version: str("version"), Target: str("target"), Fields: map[string]float64{}}
	for k, v := range rec.Values() {
		if strings.HasPrefix(k, "_") || k == "table" || k == "result" {
			continue
		}
		switch n := v.(type) {
		case float64:
			r.Fields[k] = n
		case int64:
			r.Fields[k] = float64(n)
		case uint64:
			r.Fields[k] = float64(n)
		}
	}
	return r
}

// queryError describes a failed query by the server's URL and its cause,
// with the usual remedy for a refused token or an unreachable server; it
// never includes the token.
func queryError(cfg Config, err error) error {
	var herr *ihttp.Error
	var nerr net.Error
	switch {
	case errors.As(err, &herr) && (herr.StatusCode == http.StatusUnauthorized || herr.StatusCode == http.StatusForbidden):
		return fmt.Errorf("influxdb %s: the token was refused (%d %s): set %s to a token that may read bucket %q (on InfluxDB 1.8, user:password): %w",
			cfg.URL, herr.StatusCode, http.StatusText(herr.StatusCode), TokenEnv, cfg.Bucket, err)
	case errors.As(err, &herr) && herr.StatusCode == http.StatusNotFound:
		return fmt.Errorf("influxdb %s: not found (is bucket %q right, and on InfluxDB 1.8 flux-enabled on?): %w", cfg.URL, cfg.Bucket, err)
	case errors.As(err, &nerr):
		return fmt.Errorf("influxdb %s: unreachable: %w", cfg.URL, err)
	default:
		return fmt.Errorf("influxdb %s: reading the runs of bucket %q: %w", cfg.URL, cfg.Bucket, err)
	}
}
