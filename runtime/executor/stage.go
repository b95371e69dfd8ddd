package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Stage is one stage of a ramping executor: over Duration, move linearly
// from the previous target to Target (VUs for ramping-vus, iterations per
// timeUnit for ramping-arrival-rate). Both fields are required.
type Stage struct {
	Duration Duration `json:"duration"`
	Target   *float64 `json:"target"`
}

// FieldError is a decoding error inside a field of an executor's options.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func stagesError(format string, args ...any) error {
	return &FieldError{Field: "stages", Err: fmt.Errorf(format, args...)}
}

// UnmarshalJSON decodes a stage strictly: {duration, target} and nothing
// else, with errors that say which stage field is wrong.
func (s *Stage) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		return stagesError("each stage must be an object {duration, target}, got %s", bytes.TrimSpace(b))
	}
	var st Stage
	for k, v := range fields {
		switch k {
		case "duration":
			if err := st.Duration.UnmarshalJSON(v); err != nil {
				return stagesError("duration: %w", err)
			}
		case "target":
			var t float64
			if err := json.Unmarshal(v, &t); err != nil {
				return stagesError("target must be a number, got %s", bytes.TrimSpace(v))
			}
			st.Target = &t
		default:
			return stagesError("unknown field %q (a stage has duration and target)", k)
		}
	}
	*s = st
	return nil
}

// NewStage returns the stage reaching target over d.
func NewStage(d time.Duration, target float64) Stage {
	return Stage{Duration: Duration{D: d, Set: true}, Target: &target}
}

// target is the stage's target; 0 before validation.
func (s Stage) target() float64 {
	if s.Target == nil {
		return 0
	}
	return *s.Target
}

// String is the stage as --stage writes it.
func (s Stage) String() string {
	return fmt.Sprintf("%s:%s", s.Duration.D, strconv.FormatFloat(s.target(), 'f', -1, 64))
}

// ParseStage parses a --stage value, "DURATION:TARGET" ("30s:10").
func ParseStage(s string) (Stage, error) {
	d, t, ok := strings.Cut(s, ":")
	if !ok || d == "" || t == "" {
		return Stage{}, fmt.Errorf("invalid stage %q: use DURATION:TARGET, for example 30s:10", s)
	}
	dur, err := ParseDuration(d)
	if err != nil {
		return Stage{}, fmt.Errorf("invalid stage %q: %w", s, err)
	}
	target, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(target) || math.IsInf(target, 0) {
		return Stage{}, fmt.Errorf("invalid stage %q: the target %q is not a number", s, t)
	}
	return NewStage(dur, target), nil
}

// validateStages checks stages; whole requires whole-number targets (VUs).
func validateStages(stages []Stage, whole bool) error {
	if len(stages) == 0 {
		return fmt.Errorf("stages is required: at least one {duration, target}")
	}
	var total time.Duration
	for i, st := range stages {
		switch {
		case !st.Duration.Set:
			return fmt.Errorf("stages[%d].duration is required", i)
		case st.Duration.D < 0:
			return fmt.Errorf("stages[%d].duration must not be negative, got %s", i, st.Duration.D)
		case st.Target == nil:
			return fmt.Errorf("stages[%d].target is required", i)
		case *st.Target < 0 || math.IsNaN(*st.Target) || math.IsInf(*st.Target, 0):
			return fmt.Errorf("stages[%d].target must be a non-negative number, got %v", i, *st.Target)
		case whole && *st.Target != math.Trunc(*st.Target):
			return fmt.Errorf("stages[%d].target must be a whole number of VUs, got %v", i, *st.Target)
		case whole && *st.Target > VULimit:
			return checkVUs(fmt.Sprintf("stages[%d].target", i), *st.Target)
		}
		total += st.Duration.D
		if total > DurationLimit {
			return &FieldError{Field: "stages", Err: errDurationLimit("the stages' total of " + total.String())}
		}
	}
	if total <= 0 {
		return fmt.Errorf("stages must last longer than 0s in total")
	}
	return nil
}

// stagesDuration is the stages' total duration.
func stagesDuration(stages []Stage) time.Duration {
	var total time.Duration
	for _, st := range stages {
		total += st.Duration.D
	}
	return total
}
