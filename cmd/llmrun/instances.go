package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/rendezvous"
)

// instanceFlags make a run one instance of a distributed run, which meets
// the others at a rendezvous for one run id and one start.
type instanceFlags struct {
	instances  int
	instance   int
	rendezvous string
	timeout    time.Duration
	// inspectOnly says that nothing meets at the rendezvous (inspect):
	// its address may be left out.
	inspectOnly bool
}

func (f *instanceFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.instances, "instances", 0, "run as one of N instances of one run, started together at the rendezvous (default $LLMRUN_INSTANCES)")
	fs.IntVar(&f.instance, "instance", 0, "this instance's index, 0 to N-1; instance 0 listens at the rendezvous (default $LLMRUN_INSTANCE, else $JOB_COMPLETION_INDEX)")
	fs.StringVar(&f.rendezvous, "rendezvous", "", "HOST:PORT where instance 0 listens and the others connect (default $LLMRUN_RENDEZVOUS)")
	fs.DurationVar(&f.timeout, "rendezvous-timeout", rendezvous.DefaultTimeout, "how long the instances wait for each other before the run fails naming those missing")
}

// config reads the instance flags, else their environment variables, into
// a rendezvous configuration; nil when the run is not one of instances.
// Instance 0 says on stderr where it listens.
func (f instanceFlags) config(fs *pflag.FlagSet, getenv func(string) string, stderr io.Writer) (*rendezvous.Config, error) {
	instances, err := intSetting(fs, "instances", f.instances, getenv, "LLMRUN_INSTANCES")
	if err != nil {
		return nil, err
	}
	instance, err := intSetting(fs, "instance", f.instance, getenv, "LLMRUN_INSTANCE")
	if err != nil {
		return nil, err
	}
	if instance == nil {
		// A pod of a Kubernetes Indexed Job knows its index from this.
		if instance, err = intSetting(fs, "", 0, getenv, "JOB_COMPLETION_INDEX"); err != nil {
			return nil, err
		}
	}
	address := f.rendezvous
	if !fs.Changed("rendezvous") {
		address = getenv("LLMRUN_RENDEZVOUS")
	}
	if instances == nil {
		if fs.Changed("instance") || fs.Changed("rendezvous") || getenv("LLMRUN_INSTANCE") != "" || getenv("LLMRUN_RENDEZVOUS") != "" {
			return nil, fmt.Errorf("--instance and --rendezvous need --instances (or $LLMRUN_INSTANCES)")
		}
		return nil, nil
	}
	n := *instances
	switch {
	case n < 1:
		return nil, fmt.Errorf("--instances %d: at least 1", n)
	case n > rendezvous.MaxInstances:
		return nil, fmt.Errorf("--instances %d: at most %d (docs/limits.md)", n, rendezvous.MaxInstances)
	case instance == nil && n > 1:
		return nil, fmt.Errorf("--instances %d needs --instance (or $LLMRUN_INSTANCE, or $JOB_COMPLETION_INDEX in a Kubernetes Indexed Job)", n)
	case f.timeout <= 0:
		return nil, fmt.Errorf("--rendezvous-timeout must be positive, got %v", f.timeout)
	}
	cfg := &rendezvous.Config{Instances: n, Address: address, Timeout: f.timeout}
	if instance != nil {
		cfg.Instance = *instance
	}
	if cfg.Instance < 0 || cfg.Instance >= n {
		return nil, fmt.Errorf("--instance %d of --instances %d: the index must be 0 to %d", cfg.Instance, n, n-1)
	}
	if n > 1 && (address != "" || !f.inspectOnly) {
		if address == "" {
			return nil, fmt.Errorf("--instances %d needs --rendezvous HOST:PORT (or $LLMRUN_RENDEZVOUS): instance 0 listens there, the others connect", n)
		}
		if _, _, err := net.SplitHostPort(address); err != nil {
			return nil, fmt.Errorf("--rendezvous %q: want HOST:PORT: %v", address, err)
		}
	}
	cfg.Listening = func(addr net.Addr) {
		fmt.Fprintf(stderr, "llmrun run: instance 0 of %d: waiting for the others at %s\n", n, addr)
	}
	return cfg, nil
}

// intSetting is the integer flag name when given, else the environment
// variable env when set, else nil.
func intSetting(fs *pflag.FlagSet, name string, value int, getenv func(string) string, env string) (*int, error) {
	if name != "" && fs.Changed(name) {
		return &value, nil
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
