package executor

import (
	"errors"
	"math"
	"testing"
	"time"
)

// A scaled config is validated as one written so: a load beyond llmrun's
// limits is an error naming the field, not a run at that load, nor an
// int overflowed to one VU.
func TestScaledKeepsTheLimits(t *testing.T) {
	one := 1
	rate := &ConstantArrivalRate{Rate: 2, Duration: Duration{D: time.Second, Set: true}}
	rate.PreAllocated = &one
	vus := &ConstantVUs{VUs: 2, Duration: Duration{D: time.Second, Set: true}}
	tests := []struct {
		name   string
		config Scalable
		factor float64
		// field is the field the error names; "" for no error, want the
		// load scaled.
		field string
		want  float64
	}{
		{"a rate within the limit", rate, 4, "", 8},
		{"a rate past 10⁶ a second", rate, 1e9, "rate", 0},
		{"VUs within the limit", vus, 3.2, "", 6},
		{"VUs past the limit", vus, 1e5, "vus", 0},
		{"VUs past an int", vus, math.Ldexp(1, 63), "vus", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.config.Scaled(tt.factor, 30*time.Second)
			var fe *FieldError
			switch {
			case tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field):
				t.Errorf("error %v, want one naming %s", err, tt.field)
			case tt.field == "" && err != nil:
				t.Errorf("error %v", err)
			case tt.field == "":
				if got := cfg.(Scalable).Load(); got != tt.want || cfg.MaxDuration() < 30*time.Second {
					t.Errorf("scaled to %g for %s, want %g for 30s", got, cfg.MaxDuration(), tt.want)
				}
			}
		})
	}
}
