package runner

import (
	"maps"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/rendezvous"
)

// SharePlan gives the run the segment given, else the instance's share,
// and tells the script which in __ENV; a share needs a seed given.
func TestSharePlan(t *testing.T) {
	t.Parallel()
	given, err := segment.NewPart(nil, mustSegment(t, "0:1/2"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		segment   segment.Part
		inst      *rendezvous.Config
		seedDrawn bool
		wantEnv   map[string]string
		wantErr   string
	}{
		{"whole plan", segment.Part{}, nil, true, map[string]string{"A": "1"}, ""},
		{"segment given", given, nil, false, map[string]string{"A": "1", SegmentEnv: "0:1/2", SequenceEnv: "0,1/2,1"}, ""},
		{"instance share", segment.Part{}, &rendezvous.Config{Instances: 3, Instance: 1}, false,
			map[string]string{"A": "1", SegmentEnv: "1/3:2/3", SequenceEnv: "0,1/3,2/3,1", rendezvous.InstanceEnv: "1", rendezvous.InstancesEnv: "3"}, ""},
		{"the segment given wins", given, &rendezvous.Config{Instances: 3, Instance: 2}, false,
			map[string]string{"A": "1", SegmentEnv: "0:1/2", SequenceEnv: "0,1/2,1", rendezvous.InstanceEnv: "2", rendezvous.InstancesEnv: "3"}, ""},
		{"one instance runs it all", segment.Part{}, &rendezvous.Config{Instances: 1}, true,
			map[string]string{"A": "1", rendezvous.InstanceEnv: "0", rendezvous.InstancesEnv: "1"}, ""},
		{"a segment needs a seed given", given, nil, true, nil, "--execution-segment needs --seed"},
		{"a share needs a seed given", segment.Part{}, &rendezvous.Config{Instances: 3, Instance: 1}, true, nil, "--instances 3 needs --seed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callers := map[string]string{"A": "1"}
			cfg := engine.Config{Env: callers, Overrides: engine.Overrides{Segment: tt.segment}}
			err := SharePlan(&cfg, tt.inst, tt.seedDrawn)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(cfg.Env, tt.wantEnv) {
				t.Errorf("__ENV %v, want %v", cfg.Env, tt.wantEnv)
			}
			if len(callers) != 1 {
				t.Errorf("the caller's environment became %v", callers)
			}
			again := cfg
			if err := SharePlan(&again, tt.inst, tt.seedDrawn); err != nil || again.Overrides.Segment.String() != cfg.Overrides.Segment.String() || !maps.Equal(again.Env, cfg.Env) {
				t.Errorf("a second call changed the part to %s, __ENV to %v (%v)", again.Overrides.Segment, again.Env, err)
			}
		})
	}
}

func mustSegment(t *testing.T, s string) segment.Segment {
	t.Helper()
	seg, err := segment.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return seg
}
