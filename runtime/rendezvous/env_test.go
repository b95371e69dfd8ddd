package rendezvous

import (
	"strings"
	"testing"
	"time"
)

// Settings.Config takes each setting from its flag, else its variable
// (the instance's index, else from a Kubernetes Indexed Job's), and
// names the flag or variable at fault.
func TestSettingsConfig(t *testing.T) {
	t.Parallel()
	one, two, three := 1, 2, 3
	addr := "flag:1"
	tests := []struct {
		name     string
		settings Settings
		env      map[string]string
		want     *Config // nil with wantErr "" is no instance
		wantErr  string
	}{
		{"none", Settings{}, nil, nil, ""},
		{"flags", Settings{Instances: &three, Instance: &one, Address: &addr}, nil, &Config{Instances: 3, Instance: 1, Address: "flag:1"}, ""},
		{"the flags win", Settings{Instances: &two, Instance: &one, Address: &addr},
			map[string]string{InstancesEnv: "3", InstanceEnv: "2", AddressEnv: "env:1"}, &Config{Instances: 2, Instance: 1, Address: "flag:1"}, ""},
		{"environment", Settings{}, map[string]string{InstancesEnv: "3", InstanceEnv: "2", AddressEnv: "env:1"}, &Config{Instances: 3, Instance: 2, Address: "env:1"}, ""},
		{"the instance over the job's index", Settings{}, map[string]string{InstancesEnv: "3", InstanceEnv: "2", JobIndexEnv: "1", AddressEnv: "env:1"},
			&Config{Instances: 3, Instance: 2, Address: "env:1"}, ""},
		{"one alone needs no address", Settings{Instances: &one}, nil, &Config{Instances: 1}, ""},
		{"inspect needs no address", Settings{Instances: &three, Instance: &one, NoMeeting: true}, nil, &Config{Instances: 3, Instance: 1}, ""},
		{"index without instances", Settings{Instance: &one}, nil, nil, "--instance and --rendezvous need --instances"},
		{"address in the environment without instances", Settings{}, map[string]string{AddressEnv: "h:1"}, nil, "need --instances (or $LLMRUN_INSTANCES)"},
		{"not an integer", Settings{}, map[string]string{InstancesEnv: "three"}, nil, `$LLMRUN_INSTANCES="three": not an integer`},
		{"job index out of range", Settings{}, map[string]string{InstancesEnv: "3", JobIndexEnv: "5", AddressEnv: "h:1"}, nil, "--instance 5 of --instances 3"},
		{"no index", Settings{Instances: &three, Address: &addr}, nil, nil, "--instances 3 needs --instance"},
		{"no address", Settings{Instances: &three, Instance: &one}, nil, nil, "--instances 3 needs --rendezvous HOST:PORT"},
		{"too many", Settings{}, map[string]string{InstancesEnv: "1000000000", InstanceEnv: "1", AddressEnv: "h:1"}, nil, "--instances 1000000000: at most 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.settings.Timeout == 0 {
				tt.settings.Timeout = time.Minute
			}
			cfg, err := tt.settings.Config(func(k string) string { return tt.env[k] })
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tt.want == nil:
				if cfg != nil {
					t.Fatalf("config %+v, want none", cfg)
				}
			case cfg == nil || cfg.Instances != tt.want.Instances || cfg.Instance != tt.want.Instance || cfg.Address != tt.want.Address || cfg.Timeout != time.Minute:
				t.Fatalf("config %+v, want %+v", cfg, tt.want)
			}
		})
	}
}

// What llmrun kube writes into a pod, with the index Kubernetes gives it,
// is what an instance reads back.
func TestPodEnvIsReadBack(t *testing.T) {
	t.Parallel()
	env := map[string]string{JobIndexEnv: "2"}
	for _, v := range PodEnv(4, "llmrun-chat-0.llmrun-chat:7000") {
		env[v.Name] = v.Value
	}
	cfg, err := Settings{Timeout: time.Minute}.Config(func(k string) string { return env[k] })
	if err != nil || cfg == nil || cfg.Instances != 4 || cfg.Instance != 2 || cfg.Address != "llmrun-chat-0.llmrun-chat:7000" {
		t.Fatalf("config %+v, %v; want instance 2 of 4 meeting at the pod's address", cfg, err)
	}
}
