package influxdb

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
)

// The measurements (docs/influxdb.md describes them).
const (
	mRequest  = "llm_request"
	mInterval = "llm_interval"
	mRunStart = "llm_run_start"
	mRun      = "llm_run"
	mResult   = "llm_result"
)

// allScenarios is the scenario tag of the run-wide llm_interval point.
const allScenarios = "_all"

// runTags are the tags on every point of a run: run_id, testid and the
// command line's --tags; run_id and testid win over any other tag of the
// same name.
type runTags struct {
	id, testID string
	extra      map[string]string
}

// newRunTags returns the tags of run's points.
func newRunTags(run output.Run) runTags {
	return runTags{id: run.ID, testID: run.TestID, extra: run.Tags}
}

// ids sets run_id and testid in m.
func (t runTags) ids(m map[string]string) {
	m["run_id"], m["testid"] = t.id, t.testID
}

// point returns a new point of measurement with the run's tags and kv's
// (key, value pairs; empty values are left out), at time at.
func (t runTags) point(measurement string, at time.Time, kv ...string) *write.Point {
	p := write.NewPointWithMeasurement(measurement)
	for k, v := range t.extra {
		addTag(p, k, v)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		addTag(p, kv[i], kv[i+1])
	}
	addTag(p, "run_id", t.id)
	addTag(p, "testid", t.testID)
	return p.SortTags().SetTime(at)
}

// addTag sets a tag unless its value is empty, which line protocol cannot
// carry.
func addTag(p *write.Point, k, v string) {
	if v != "" {
		p.AddTag(k, v)
	}
}

// addFloat adds a float field unless it is NaN or infinite, which line
// protocol cannot carry (and which would fail the whole batch).
func addFloat(p *write.Point, k string, v float64) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		p.AddField(k, v)
	}
}

// addMs adds a latency field, left out when 0 (not measured).
func addMs(p *write.Point, k string, v float64) {
	if v != 0 {
		addFloat(p, k, v)
	}
}

// requestField is a field of the llm_request points: a figure of the
// record.
type requestField struct {
	name   string
	figure llm.RecordField
}

// requestFields are the llm_request fields: the record's figures
// (llm.RecordFields), named as the per-request files name them but for
// the "_ms" of the float ones, all milliseconds.
func requestFields() []requestField {
	figures := llm.RecordFields()
	out := make([]requestField, len(figures))
	for i, f := range figures {
		out[i] = requestField{name: strings.TrimSuffix(f.Name, "_ms"), figure: f}
	}
	return out
}

// requestPoint is a record's llm_request point, with its series' tags and
// fields: a latency is left out when 0 (not measured), a failed
// request's only figure (error_class) from an ok request's point.
func requestPoint(r *llm.Record, fields []requestField, tags []metrics.Tag, at time.Time) *write.Point {
	p := write.NewPointWithMeasurement(mRequest)
	for _, t := range tags {
		p.AddTag(t.Key, t.Value)
	}
	for i := range fields {
		f := &fields[i].figure
		switch name := fields[i].name; {
		case f.FailedOnly && r.OK:
		case f.Kind == reflect.Float64:
			addMs(p, name, f.Float64(r))
		case f.Kind == reflect.Int:
			p.AddField(name, f.Int(r))
		case f.Kind == reflect.Bool:
			p.AddField(name, f.Bool(r))
		default:
			p.AddField(name, f.String(r))
		}
	}
	return p.SetTime(at)
}

// startPoint is the run's llm_run_start point.
func startPoint(run output.Run, tags runTags) *write.Point {
	at := run.Start
	if at.IsZero() {
		at = time.Now()
	}
	maxVUs := 0
	if run.Progress != nil {
		maxVUs = run.Progress().MaxVUs
	}
	return tags.point(mRunStart, at).AddField("max_vus", maxVUs)
}

// runPoints are the llm_run points of a finished run: the whole run's,
// and each scenario's when there are several (models gives each
// scenario's models, as its requests were tagged).
func runPoints(s *summary.Summary, tags runTags, at time.Time, models map[string][]string) []*write.Point {
	at = runTime(s, at)
	p := tags.point(mRun, at, "model", joinModels(s.Meta.Models))
	servingFields(p, s.Serving)
	latencyFields(p, s.Latency)
	intervalFields(p, regression.Estimates(regression.RunBlock(s), regression.DefaultConfidence))
	passed, failed := 0, 0
	for _, t := range s.Thresholds {
		if t.Passed {
			passed++
		} else {
			failed++
		}
	}
	shapes := make([]string, len(s.Meta.LoadShape))
	for i, sh := range s.Meta.LoadShape {
		shapes[i] = sh.Description
	}
	p.AddField("iterations", s.Serving.Iterations)
	p.AddField("dropped_iterations", s.Serving.DroppedIterations)
	p.AddField("thresholds_passed", passed)
	p.AddField("thresholds_failed", failed)
	p.AddField("aborted", s.AbortedBy != "")
	p.AddField("interrupted_run", s.Meta.Interrupted)
	p.AddField("client_warnings", len(s.Client.Warnings))
	clientFields(p, regression.HealthOf(s.Client))
	p.AddField("version", s.Meta.Version)
	p.AddField("script", s.Meta.Script)
	p.AddField("script_sha256", s.Meta.ScriptSHA256)
	p.AddField("target", s.Meta.Target)
	p.AddField("base_url", s.Meta.BaseURL)
	p.AddField("host", s.Meta.Host)
	p.AddField("load_shape", strings.Join(shapes, "; "))
	p.AddField("seed", s.Meta.Seed)
	instancesField(p, s.Meta.Instances)
	points := []*write.Point{p}
	if len(s.Scenarios) > 1 {
		for _, sc := range s.Scenarios {
			p := tags.point(mRun, at, "model", joinModels(models[sc.Name]), "scenario", sc.Name)
			servingFields(p, sc.Serving)
			latencyFields(p, sc.Latency)
			block, _ := regression.ScenarioBlock(s, sc.Name)
			intervalFields(p, regression.Estimates(block, regression.DefaultConfidence))
			instancesField(p, s.Meta.Instances)
			clientFields(p, regression.HealthOf(s.Client))
			points = append(points, p)
		}
	}
	return points
}

// clientFields add the run's client health to an llm_run point, for
// llmrun trend to know a machine-limited run: client_limited, and
// client_limit naming the limit when there is one; neither when the
// client was not measured, which trend reads as unknown, like a point
// stored before these fields.
func clientFields(p *write.Point, h regression.Health) {
	if !h.Known {
		return
	}
	p.AddField("client_limited", h.Limited())
	if h.Limited() {
		p.AddField("client_limit", h.Limit)
	}
}

// instancesField adds the instances field of a run of several instances
// (--instances) to an llm_run point: trend knows from it that the point
// holds one instance's figures, and reads the run's merged results.
func instancesField(p *write.Point, instances int) {
	if instances > 1 {
		p.AddField("instances", instances)
	}
}

// runTime is the time of a finished run's points: its summary's start,
// else start, else now.
func runTime(s *summary.Summary, start time.Time) time.Time {
	switch {
	case !s.Meta.Start.IsZero():
		return s.Meta.Start
	case !start.IsZero():
		return start
	}
	return time.Now()
}

// joinModels is the model tag: the models, sorted, joined with ",".
func joinModels(models []string) string {
	return strings.Join(slices.Sorted(slices.Values(models)), ",")
}

// servingFields adds the fields of a serving block to an llm_run point.
func servingFields(p *write.Point, s summary.Serving) {
	p.AddField("duration_s", s.DurationSeconds)
	p.AddField("requests", s.Requests)
	p.AddField("completed", s.OK)
	p.AddField("failed", s.Failed)
	p.AddField("interrupted", s.Interrupted)
	addFloat(p, "success_rate", s.SuccessRate)
	addFloat(p, "request_throughput", s.RequestThroughput)
	addFloat(p, "output_throughput", s.OutputTokenThroughput)
	addFloat(p, "total_token_throughput", s.TotalTokenThroughput)
	p.AddField("input_tokens", s.PromptTokens)
	p.AddField("output_tokens", s.OutputTokens)
	p.AddField("cached_tokens", s.CachedTokens)
	addFloat(p, "mean_input_tokens", s.MeanInputTokens)
	addFloat(p, "mean_output_tokens", s.MeanOutputTokens)
}

// intervalFields adds the figures' confidence intervals to an llm_run
// point, for llmrun trend to judge changes against the noise:
// F_ci_lo, F_ci_hi, L_count and ci_level (regression.IntervalFields).
func intervalFields(p *write.Point, estimates map[string]regression.Estimate) {
	fields := regression.IntervalFields(estimates, regression.DefaultConfidence)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		addFloat(p, k, fields[k])
	}
}

// latencyRows are the latency rows stored in llm_run, by their metric,
// with the prefix of their fields.
var latencyRows = map[string]string{"llm_ttft": "ttft", "llm_tpot": "tpot", "llm_itl": "itl", "llm_e2e": "e2e", "llm_ttfb": "ttfb"}

// latencyFields adds L_mean, L_p50, L_p90, L_p95, L_p99 and L_max of each
// latency row to an llm_run point.
func latencyFields(p *write.Point, rows []summary.LatencyRow) {
	for _, r := range rows {
		l, ok := latencyRows[r.Metric]
		if !ok {
			continue
		}
		addFloat(p, l+"_mean", r.Mean)
		for _, q := range []string{"p50", "p90", "p95", "p99"} {
			if v, ok := r.P[q]; ok {
				addFloat(p, l+"_"+q, v)
			}
		}
		addFloat(p, l+"_max", r.Max)
	}
}
