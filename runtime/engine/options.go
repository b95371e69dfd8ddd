package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/spelling"
)

// Options are the script's `export const options`, decoded strictly: an
// unknown or mistyped field is an error that names it.
type Options struct {
	VUs             *int                       `json:"vus"`
	Duration        *executor.Duration         `json:"duration"`
	Iterations      *int                       `json:"iterations"`
	Stages          []executor.Stage           `json:"stages"`
	Scenarios       map[string]json.RawMessage `json:"scenarios"`
	Tags            map[string]string          `json:"tags"`
	SetupTimeout    *executor.Duration         `json:"setupTimeout"`
	TeardownTimeout *executor.Duration         `json:"teardownTimeout"`
	// Thresholds stay raw here; package threshold parses them.
	Thresholds json.RawMessage `json:"thresholds"`
	// Warmup is every scenario's warmup, unless it sets its own.
	Warmup *Warmup `json:"warmup"`
	// SLO is the serving-level objective capacity verdicts and reports
	// judge against ({ ttft_p99, tpot_p99 }, ms), and Capacity the
	// criteria of a sweep's verdict ({ minGain }); both stay raw here, for
	// the command line's parser of --slo to read (--slo wins).
	SLO      json.RawMessage `json:"slo"`
	Capacity json.RawMessage `json:"capacity"`
	// Goodput are the per-request bounds of goodput ({ ttft, tpot, e2e },
	// ms), raw for the runner to read (--goodput wins).
	Goodput json.RawMessage `json:"goodput"`
	// ServerMetrics says which servers' metrics and GPU telemetry the
	// run reads ({ urls, preset, interval, gpu }, or false), raw for the
	// runner to read (--server-metrics and --gpu-metrics win).
	ServerMetrics json.RawMessage `json:"serverMetrics"`
	// EarlyStop stops a run whose first requests all fail alike; nil is
	// DefaultEarlyStop.
	EarlyStop *EarlyStop `json:"earlyStop"`
}

// Overrides are the command line's load-shape flags. Any of them replaces
// the script's scenarios with the shorthand they imply, taking the fields
// they leave unset from the script's shorthand, as in k6. Stages (-s)
// replace the script's duration and iterations, and a duration or
// iterations replace the script's stages.
type Overrides struct {
	VUs        *int
	Duration   *time.Duration
	Iterations *int
	Stages     []executor.Stage
	// Segment is the execution segment this process runs of every
	// scenario (--execution-segment); the zero Part runs the whole plan.
	// It does not replace the script's scenarios: it takes its part of
	// each, once they are resolved.
	Segment segment.Part
}

func (o Overrides) any() bool {
	return o.VUs != nil || o.Duration != nil || o.Iterations != nil || len(o.Stages) > 0
}

// Scenario is one resolved scenario: when it starts, what it calls and how
// its executor schedules iterations.
type Scenario struct {
	Name     string
	Executor string
	Exec     string
	// StartAfter names the scenario this one starts after (startAfter):
	// once that one's executor has returned, graceful stop included; ""
	// starts it with the run. StartTime is then a delay after that end.
	StartAfter string
	StartTime  time.Duration
	// LatestStart is the latest offset from the run's start at which the
	// scenario can start: StartTime, plus, after StartAfter, the latest
	// that scenario can end (its LatestStart and MaxDuration). It equals
	// StartTime for a scenario that starts with the run.
	LatestStart time.Duration
	Env         map[string]string
	Tags        map[string]string
	// Warmup is the scenario's warmup (its own, or options.warmup).
	Warmup    Warmup
	warmupSet bool
	Config    executor.Config
	// shorthand is where the vus/duration/iterations/stages shorthand
	// that made the scenario was given ("command line", "options"); ""
	// for a scenario of options.scenarios.
	shorthand string
}

// ConfigError is a problem in the options or flags; it names the field.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("invalid options: %s: %v", e.Field, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }

// ParseOptions decodes the options JSON exported by a script.
func ParseOptions(data []byte) (*Options, error) {
	var o Options
	if len(bytes.TrimSpace(data)) == 0 || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return &o, nil
	}
	if err := refuseNulls(data); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, &ConfigError{Field: "options", Err: jsonReason(err)}
	}
	if err := decodeFields("options", fields, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// decodeFields decodes an object's fields into v strictly, one at a time
// in sorted order, so that an error names its field under prefix.
func decodeFields(prefix string, fields map[string]json.RawMessage, v any) *ConfigError {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		err := decodeStrict(mustMarshal(map[string]json.RawMessage{k: fields[k]}), v)
		if err == nil {
			continue
		}
		field := jsonField(err)
		if !strings.HasPrefix(field, "."+k) {
			field = "." + k
		}
		return &ConfigError{Field: prefix + field, Err: jsonReason(err)}
	}
	return nil
}

// loadFields are the options whose null is refused: a script's NaN or
// Infinity becomes null when its options are exported, which would
// otherwise read as an absent field and fall back to a default.
var loadFields = []string{"vus", "duration", "iterations", "stages", "scenarios", "setupTimeout", "teardownTimeout"}

// refuseNulls refuses a null anywhere in the load-shape options, naming
// the field.
func refuseNulls(data []byte) error {
	var top map[string]any
	if json.Unmarshal(data, &top) != nil {
		return nil // decodeStrict says what is wrong
	}
	for _, k := range loadFields {
		if v, ok := top[k]; ok {
			if path, found := findNull(v, "options."+k); found {
				return &ConfigError{Field: path, Err: errors.New("must be a finite value, got NaN, Infinity or null (the script's NaN and Infinity become null in options)")}
			}
		}
	}
	return nil
}

// findNull returns the path of the first null in v, sorted by key.
func findNull(v any, path string) (string, bool) {
	switch v := v.(type) {
	case nil:
		return path, true
	case []any:
		for i, e := range v {
			if p, ok := findNull(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		for _, k := range keys {
			if p, ok := findNull(v[k], path+"."+k); ok {
				return p, true
			}
		}
	}
	return "", false
}

// defaultExec is the exported function a scenario calls when exec is unset.
const defaultExec = "default"

// scenarioName is the name of the scenario the shorthand options imply.
const scenarioName = "default"

// ResolveScenarios resolves the load shape: command-line overrides first,
// then the script's scenarios, then its vus/duration/iterations/stages
// shorthand, with k6's rules, then the execution segment's part of each,
// whose VUs together must stay within the limit of one process. The
// result is sorted by start time, then name.
func ResolveScenarios(o *Options, ov Overrides) ([]Scenario, error) {
	scs, err := loadShape(o, ov)
	if err != nil {
		return nil, err
	}
	if !ov.Segment.Whole() {
		for i := range scs {
			scs[i].Config = scs[i].Config.Segment(ov.Segment)
		}
	}
	if err := checkTotalVUs(scs); err != nil {
		return nil, err
	}
	for i := range scs {
		if !scs[i].warmupSet && o.Warmup != nil {
			scs[i].Warmup = *o.Warmup
		}
		// The whole plan's first iterations are dealt as its arrivals
		// are: this part warms up with its share of them.
		scs[i].Warmup.Iterations = ov.Segment.ScaleInt(scs[i].Warmup.Iterations)
	}
	return scs, nil
}

// loadShape resolves the scenarios without applying options.warmup.
func loadShape(o *Options, ov Overrides) ([]Scenario, error) {
	if ov.any() {
		// Flags win field by field over the script's own shorthand, as in
		// k6: "-d 10s" on a script with vus: 16 runs 16 VUs for 10s.
		sh := shorthandFields{vus: o.VUs, duration: o.duration(), iterations: o.Iterations, stages: o.Stages}
		if ov.VUs != nil {
			sh.vus = ov.VUs
		}
		if ov.Duration != nil || ov.Iterations != nil {
			// A duration or iterations on the command line replace the
			// script's stages (k6: a higher tier's load shape wins).
			sh.stages = nil
		}
		if ov.Duration != nil {
			sh.duration = ov.Duration
		}
		if ov.Iterations != nil {
			sh.iterations = ov.Iterations
		}
		if len(ov.Stages) > 0 {
			// Stages on the command line replace the script's duration
			// and iterations, and contradict those of the command line.
			sh.stages = ov.Stages
			sh.duration, sh.iterations = ov.Duration, ov.Iterations
		}
		return shorthand(sh, "command line")
	}
	hasShorthand := o.VUs != nil || o.Duration != nil || o.Iterations != nil || len(o.Stages) > 0
	if len(o.Scenarios) == 0 {
		return shorthand(shorthandFields{vus: o.VUs, duration: o.duration(), iterations: o.Iterations, stages: o.Stages}, "options")
	}
	if hasShorthand {
		return nil, &ConfigError{Field: "options.scenarios", Err: errors.New("use either scenarios or the vus/duration/iterations shorthand (or stages), not both")}
	}
	names := make([]string, 0, len(o.Scenarios))
	for n := range o.Scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Scenario, 0, len(names))
	for _, n := range names {
		sc, err := parseScenario(n, o.Scenarios[n])
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	if err := resolveChains(out); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LatestStart < out[j].LatestStart })
	return out, nil
}

// resolveChains checks each scenario's startAfter (a scenario of the run,
// not itself, in no cycle) and sets every LatestStart. scs are sorted by
// name, so that an error is about the first scenario it concerns.
func resolveChains(scs []Scenario) error {
	byName := make(map[string]*Scenario, len(scs))
	for i := range scs {
		byName[scs[i].Name] = &scs[i]
	}
	for i := range scs {
		sc := &scs[i]
		if sc.StartAfter == "" {
			continue
		}
		field := "options.scenarios." + sc.Name + ".startAfter"
		switch _, ok := byName[sc.StartAfter]; {
		case sc.StartAfter == sc.Name:
			return &ConfigError{Field: field, Err: errors.New("a scenario cannot start after itself")}
		case !ok:
			return &ConfigError{Field: field, Err: fmt.Errorf("no scenario is named %q (the scenarios are %s)", sc.StartAfter, strings.Join(slices.Sorted(maps.Keys(byName)), ", "))}
		}
		path := []string{sc.Name}
		for next := byName[sc.StartAfter]; next != nil; next = byName[next.StartAfter] {
			path = append(path, next.Name)
			if next.Name == sc.Name {
				return &ConfigError{Field: field, Err: fmt.Errorf("a cycle (%s, each starting after the next): none of them would ever start", strings.Join(path, " → "))}
			}
			if len(path) > len(scs) {
				break // a cycle that does not pass through sc; its own members report it
			}
		}
	}
	var latest func(sc *Scenario) time.Duration
	latest = func(sc *Scenario) time.Duration {
		if sc.StartAfter == "" {
			return sc.StartTime
		}
		before := byName[sc.StartAfter]
		return latest(before) + before.Config.MaxDuration() + sc.StartTime
	}
	for i := range scs {
		scs[i].LatestStart = latest(&scs[i])
	}
	return nil
}

func (o *Options) duration() *time.Duration {
	if o.Duration == nil {
		return nil
	}
	return &o.Duration.D
}

// shorthandFields are the shorthand options, from the script or the
// command line.
type shorthandFields struct {
	vus        *int
	duration   *time.Duration
	iterations *int
	stages     []executor.Stage
}

// shorthand turns vus/duration/iterations/stages into one scenario, as k6
// does: stages → ramping-vus starting at vus (default 1); iterations →
// shared-iterations (bounded by duration when both are set); duration alone
// → constant-vus; nothing → one iteration of one VU. Stages with a duration
// or iterations contradict each other.
func shorthand(sh shorthandFields, where string) ([]Scenario, error) {
	vus, d, iterations := sh.vus, sh.duration, sh.iterations
	if d != nil {
		if err := executor.CheckDuration(*d); err != nil {
			return nil, shorthandError(where, where, &executor.FieldError{Field: "duration", Err: err})
		}
	}
	n := 1
	if vus != nil {
		n = *vus
	}
	stagesField := "options.stages"
	if where != "options" {
		stagesField = "--stage"
	}
	var cfg executor.Config
	switch {
	case len(sh.stages) > 0:
		if d != nil || iterations != nil {
			other := "duration"
			if d == nil {
				other = "iterations"
			}
			return nil, &ConfigError{Field: stagesField, Err: fmt.Errorf("use either stages or %s, not both (%s vus with stages sets the VUs at the start)", other, where)}
		}
		c := &executor.RampingVUs{StartVUs: n, Stages: sh.stages}
		if err := c.Validate(); err != nil {
			return nil, shorthandError(where, stagesField, err)
		}
		return []Scenario{{Name: scenarioName, Executor: "ramping-vus", Exec: defaultExec, Config: c, shorthand: where}}, nil
	case iterations != nil:
		c := &executor.SharedIterations{}
		c.VUs, c.Iterations = n, *iterations
		if d != nil {
			c.Limit = executor.Duration{D: *d, Set: true}
		}
		cfg = c
	case d != nil:
		cfg = &executor.ConstantVUs{VUs: n, Duration: executor.Duration{D: *d, Set: true}}
	case vus != nil:
		return nil, &ConfigError{Field: where + " vus", Err: errors.New("vus needs a duration or a number of iterations (for example -u 10 -d 30s)")}
	default:
		c := &executor.SharedIterations{}
		c.VUs, c.Iterations = 1, 1
		cfg = c
	}
	if err := cfg.Validate(); err != nil {
		return nil, shorthandError(where, where, err)
	}
	name := "shared-iterations"
	if _, ok := cfg.(*executor.ConstantVUs); ok {
		name = "constant-vus"
	}
	return []Scenario{{Name: scenarioName, Executor: name, Exec: defaultExec, Config: cfg, shorthand: where}}, nil
}

// shorthandError names the field of a shorthand option an error is about
// as the user wrote it: options.vus in the script, --vus on the command
// line; other errors are about field.
func shorthandError(where, field string, err error) error {
	var fe *executor.FieldError
	if !errors.As(err, &fe) {
		return &ConfigError{Field: field, Err: err}
	}
	name, _, _ := strings.Cut(fe.Field, "[")
	switch name {
	case "startVUs":
		name = "vus"
	case "maxDuration":
		name = "duration"
	}
	if where == "options" {
		if name == "stages" {
			return &ConfigError{Field: "options." + fe.Field, Err: fe.Err}
		}
		return &ConfigError{Field: "options." + name, Err: fe.Err}
	}
	if name == "stages" {
		name = "stage"
	}
	return &ConfigError{Field: "--" + name, Err: fe.Err}
}

// checkTotalVUs refuses scenarios that use more than executor.VULimit VUs
// together.
func checkTotalVUs(scs []Scenario) error {
	total := 0
	for _, sc := range scs {
		total += sc.Config.MaxVUs()
	}
	if total > executor.VULimit {
		return &ConfigError{Field: "options.scenarios", Err: fmt.Errorf("the scenarios use up to %d VUs together, more than llmrun's limit of %d VUs per process (see docs/limits.md)", total, executor.VULimit)}
	}
	return nil
}

// commonFields are the scenario fields every executor has.
type commonFields struct {
	Warmup    *Warmup           `json:"warmup"`
	Executor  string            `json:"executor"`
	Exec      string            `json:"exec"`
	StartTime executor.Duration `json:"startTime"`
	// StartAfter is llmrun's own (k6 has none): the scenario starts when
	// the one it names has ended.
	StartAfter string            `json:"startAfter"`
	Env        map[string]string `json:"env"`
	Tags       map[string]string `json:"tags"`
}

func parseScenario(name string, raw json.RawMessage) (Scenario, error) {
	field := "options.scenarios." + name
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Scenario{}, &ConfigError{Field: field, Err: errors.New("must be an object")}
	}
	common := make(map[string]json.RawMessage)
	for _, k := range []string{"executor", "exec", "startTime", "startAfter", "env", "tags", "warmup"} {
		if v, ok := fields[k]; ok {
			common[k] = v
			delete(fields, k)
		}
	}
	var c commonFields
	if err := decodeStrict(mustMarshal(common), &c); err != nil {
		return Scenario{}, &ConfigError{Field: field + jsonField(err), Err: jsonReason(err)}
	}
	if c.Executor == "" {
		return Scenario{}, &ConfigError{Field: field + ".executor", Err: fmt.Errorf("is required (one of %s)", strings.Join(executor.Names(), ", "))}
	}
	cfg, err := executor.New(c.Executor)
	if err != nil {
		return Scenario{}, &ConfigError{Field: field + ".executor", Err: err}
	}
	if err := decodeFields(field, fields, cfg); err != nil {
		err.Err = fmt.Errorf("%w (executor %s)", err.Err, c.Executor)
		return Scenario{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Scenario{}, &ConfigError{Field: field + jsonField(err), Err: jsonReason(err)}
	}
	if c.StartTime.D < 0 {
		return Scenario{}, &ConfigError{Field: field + ".startTime", Err: errors.New("must not be negative")}
	}
	if c.Exec == "" {
		c.Exec = defaultExec
	}
	sc := Scenario{Name: name, Executor: c.Executor, Exec: c.Exec, StartAfter: c.StartAfter, StartTime: c.StartTime.D,
		LatestStart: c.StartTime.D, Env: c.Env, Tags: c.Tags, Config: cfg}
	if c.Warmup != nil {
		sc.Warmup, sc.warmupSet = *c.Warmup, true
	}
	return sc, nil
}

// decodeStrict decodes data into v, refusing a field v's type lacks: that
// error is an *unknownFieldError with the field probably meant.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if f, ok := unknownField(err); ok {
		return &unknownFieldError{field: f, near: spelling.Nearest(f, jsonNames(reflect.TypeOf(v)))}
	}
	return err
}

// unknownFieldError is a field of an object that its type lacks, with the
// one of its fields the field's name is probably a slip of ("" when none).
type unknownFieldError struct{ field, near string }

func (e *unknownFieldError) Error() string { return fmt.Sprintf("json: unknown field %q", e.field) }

// jsonNames are the names encoding/json decodes into typ's fields, those
// of embedded structs included.
func jsonNames(typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && name == "":
			names = append(names, jsonNames(f.Type)...)
		case name == "":
			names = append(names, f.Name)
		default:
			names = append(names, name)
		}
	}
	return names
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // re-encoding values json.Unmarshal produced cannot fail
	}
	return b
}

// jsonField names the field a decoding error is about, as ".name".
func jsonField(err error) string {
	var fe *executor.FieldError
	if errors.As(err, &fe) {
		return "." + fe.Field
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "." + te.Field
	}
	if f, ok := unknownField(err); ok {
		return "." + f
	}
	return ""
}

// fieldPrefix is "name: " for the field a decoding error is about, or "".
func fieldPrefix(err error) string {
	if f := jsonField(err); f != "" {
		return f[1:] + ": "
	}
	return ""
}

// jsonReason turns a decoding error into words without Go type names.
func jsonReason(err error) error {
	var fe *executor.FieldError
	if errors.As(err, &fe) {
		return fe.Err
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return typeReason(te)
	}
	if e, ok := errors.AsType[*unknownFieldError](err); ok && e.near != "" {
		return fmt.Errorf("unknown field (did you mean %q?)", e.near)
	}
	if _, ok := unknownField(err); ok {
		return errors.New("unknown field")
	}
	return err
}

func unknownField(err error) (string, bool) {
	const prefix = "json: unknown field "
	if err == nil {
		return "", false
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return "", false
	}
	return strings.Trim(strings.TrimPrefix(msg, prefix), `"`), true
}

// typeReason says what a field of the wrong type holds: "expected a whole
// number, got 1.5", "expected a number, got a string".
func typeReason(te *json.UnmarshalTypeError) error {
	want := jsTypeName(te.Type.Kind().String())
	literal, isNumber := strings.CutPrefix(te.Value, "number ")
	if !isNumber {
		return fmt.Errorf("expected a %s, got a %s", want, te.Value)
	}
	f, err := strconv.ParseFloat(literal, 64)
	if errors.Is(err, strconv.ErrRange) || (err == nil && f == math.Trunc(f) && want == "whole number") {
		return fmt.Errorf("%s is too large a number", literal)
	}
	return fmt.Errorf("expected a %s, got %s", want, literal)
}

func jsTypeName(kind string) string {
	switch kind {
	case "int", "int64":
		return "whole number"
	case "float64":
		return "number"
	case "map", "struct":
		return "object"
	case "slice":
		return "array"
	default:
		return kind
	}
}

// Describe is a one-line description of the scenario's load, with its
// warmup.
func (sc *Scenario) Describe() string {
	d := sc.Config.Describe()
	if !sc.Warmup.IsZero() {
		d += ", warmup: " + sc.Warmup.String()
	}
	return d
}
