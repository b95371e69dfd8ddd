package runflags

import (
	"fmt"
	"io"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/rendezvous"
)

// Instances are the flags that make a run one instance of a distributed run, which meets
// the others at a rendezvous for one run id and one start.
type Instances struct {
	instances  int
	instance   int
	rendezvous string
	timeout    time.Duration
	// InspectOnly says that nothing meets at the rendezvous (inspect):
	// its address may be left out.
	InspectOnly bool
}

// Register adds the flags to fs.
func (f *Instances) Register(fs *pflag.FlagSet) {
	fs.IntVar(&f.instances, "instances", 0, "run as one of N instances of one run, started together at the rendezvous (default $LLMRUN_INSTANCES)")
	fs.IntVar(&f.instance, "instance", 0, "this instance's index, 0 to N-1; instance 0 listens at the rendezvous (default $LLMRUN_INSTANCE, else $JOB_COMPLETION_INDEX)")
	fs.StringVar(&f.rendezvous, "rendezvous", "", "HOST:PORT where instance 0 listens and the others connect (default $LLMRUN_RENDEZVOUS)")
	fs.DurationVar(&f.timeout, "rendezvous-timeout", rendezvous.DefaultTimeout, "how long the instances wait for each other before the run fails naming those missing")
}

// Config reads the instance flags, else their environment variables, into
// a rendezvous configuration (rendezvous.Settings); nil when the run is
// not one of instances. Instance 0 says on stderr where it listens.
func (f Instances) Config(fs *pflag.FlagSet, getenv func(string) string, stderr io.Writer) (*rendezvous.Config, error) {
	s := rendezvous.Settings{Timeout: f.timeout, NoMeeting: f.InspectOnly}
	if fs.Changed("instances") {
		s.Instances = &f.instances
	}
	if fs.Changed("instance") {
		s.Instance = &f.instance
	}
	if fs.Changed("rendezvous") {
		s.Address = &f.rendezvous
	}
	cfg, err := s.Config(getenv)
	if cfg != nil {
		cfg.Listening = func(addr net.Addr) {
			fmt.Fprintf(stderr, "llmrun run: instance 0 of %d: waiting for the others at %s\n", cfg.Instances, addr)
		}
	}
	return cfg, err
}
