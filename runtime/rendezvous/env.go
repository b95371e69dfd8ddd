package rendezvous

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// The environment an instance is told who it is by, when no flag says it:
// llmrun kube writes InstancesEnv and AddressEnv into every pod (PodEnv),
// Kubernetes sets JobIndexEnv in each pod of an Indexed Job, and
// Settings.Config reads them back. A script sees InstanceEnv and
// InstancesEnv in __ENV, however they were given.
const (
	InstancesEnv = "LLMRUN_INSTANCES"
	InstanceEnv  = "LLMRUN_INSTANCE"
	AddressEnv   = "LLMRUN_RENDEZVOUS"
	JobIndexEnv  = "JOB_COMPLETION_INDEX"
)

// EnvVar is a variable of an instance's environment.
type EnvVar struct{ Name, Value string }

// PodEnv is the environment that makes each pod of an Indexed Job one of
// instances, meeting at address; the pod's index is the Job's.
func PodEnv(instances int, address string) []EnvVar {
	return []EnvVar{{InstancesEnv, strconv.Itoa(instances)}, {AddressEnv, address}}
}

// Settings are an instance's flags (--instances, --instance,
// --rendezvous, --rendezvous-timeout): nil or "" when not given.
type Settings struct {
	Instances, Instance *int
	Address             *string
	Timeout             time.Duration
	// NoMeeting says that nothing meets at the rendezvous (llmrun
	// inspect): its address may be left out.
	NoMeeting bool
}

// Config reads the settings, else their environment variables, into a
// rendezvous configuration; nil when the run is not one of instances.
// Its errors name the flag or variable at fault.
func (s Settings) Config(getenv func(string) string) (*Config, error) {
	instances, err := intSetting(s.Instances, getenv, InstancesEnv)
	if err != nil {
		return nil, err
	}
	instance, err := intSetting(s.Instance, getenv, InstanceEnv)
	if err != nil {
		return nil, err
	}
	if instance == nil {
		// A pod of a Kubernetes Indexed Job knows its index from this.
		if instance, err = intSetting(nil, getenv, JobIndexEnv); err != nil {
			return nil, err
		}
	}
	address := getenv(AddressEnv)
	if s.Address != nil {
		address = *s.Address
	}
	if instances == nil {
		if s.Instance != nil || s.Address != nil || getenv(InstanceEnv) != "" || getenv(AddressEnv) != "" {
			return nil, fmt.Errorf("--instance and --rendezvous need --instances (or $%s)", InstancesEnv)
		}
		return nil, nil
	}
	n := *instances
	switch {
	case n < 1:
		return nil, fmt.Errorf("--instances %d: at least 1", n)
	case n > MaxInstances:
		return nil, fmt.Errorf("--instances %d: at most %d (docs/limits.md)", n, MaxInstances)
	case instance == nil && n > 1:
		return nil, fmt.Errorf("--instances %d needs --instance (or $%s, or $%s in a Kubernetes Indexed Job)", n, InstanceEnv, JobIndexEnv)
	case s.Timeout <= 0:
		return nil, fmt.Errorf("--rendezvous-timeout must be positive, got %v", s.Timeout)
	}
	cfg := &Config{Instances: n, Address: address, Timeout: s.Timeout}
	if instance != nil {
		cfg.Instance = *instance
	}
	if cfg.Instance < 0 || cfg.Instance >= n {
		return nil, fmt.Errorf("--instance %d of --instances %d: the index must be 0 to %d", cfg.Instance, n, n-1)
	}
	if n > 1 && (address != "" || !s.NoMeeting) {
		if address == "" {
			return nil, fmt.Errorf("--instances %d needs --rendezvous HOST:PORT (or $%s): instance 0 listens there, the others connect", n, AddressEnv)
		}
		if _, _, err := net.SplitHostPort(address); err != nil {
			return nil, fmt.Errorf("--rendezvous %q: want HOST:PORT: %v", address, err)
		}
	}
	return cfg, nil
}

// intSetting is the flag's value when given, else the environment
// variable env when set, else nil.
func intSetting(flag *int, getenv func(string) string, env string) (*int, error) {
	if flag != nil {
		return flag, nil
	}
	s := getenv(env)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, fmt.Errorf("$%s=%q: not an integer", env, s)
	}
	return &n, nil
}
