// Package rendezvous starts the instances of one distributed run together.
//
// Instance 0 listens at the rendezvous address (and nowhere else); the
// other instances connect to it, retrying with backoff while it is not up
// yet. Each arrives (Arrive) saying its index, the protocol version and a
// hash of its test plan, and is welcomed with the run's id, drawn by
// instance 0, so that its outputs carry the shared id from their start.
// Once its VUs are initialised it says it is ready (Meeting.Start). When
// all are ready, instance 0 draws one start time a short lead ahead and
// sends it to every instance; each waits until that start and returns
// the Run. A misconfigured instance (an index given twice or out of
// range, another instance count, another plan or protocol), or any peer
// that is not an instance, is refused alone with an error that names the
// difference; instance 0 counts it and goes on waiting. Instances that
// never arrive, or never get ready, end the wait after the timeout with an
// error that names them and the connections ignored. An instance checks
// every field of instance 0's answers (the run id one printable word, the
// delay within the timeout) and refuses the run otherwise.
//
// The start reaches each instance as a delay from the moment it was sent,
// so the instances' starts differ by the one-way network delay only, not
// by the difference of their clocks; the start time each instance returns
// is instance 0's, the same for all.
//
// After the start, instance 0 sends nothing more. When it asks for them
// in the start (Config.Figures: it runs a dashboard), every other
// instance keeps its connection and sends its figures every
// Config.FiguresEvery (Run.Figures), as lines of at most MaxFigures
// bytes, until its run ends and it hangs up; instance 0 reads each
// connection on a goroutine of its own and hands each line to its
// Receiver, which names an instance lost when its connection ends, it
// goes silent or it sends what is not figures. Otherwise nothing is
// exchanged after the start. Either way an instance lost during the run
// does not stop the others.
package rendezvous

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/llmrun/llmrun/internal/wait"
)

// Protocol is the version of the messages instances exchange; instances
// of another version are refused.
// Protocol 2 added the figures sent after the start.
const Protocol = 2

// Defaults and bounds.
const (
	// DefaultTimeout is how long instances wait for each other when
	// Config.Timeout is zero.
	DefaultTimeout = 2 * time.Minute
	// DefaultLead is how far ahead of its drawing the start lies when
	// Config.Lead is zero: the start messages reach every instance long
	// before it (a message takes well under a millisecond on one machine
	// or a cluster network, tens of milliseconds on a loaded node), while a
	// second is nothing next to a load test's length.
	DefaultLead = time.Second
	// maxMessage caps a message's size in bytes: a longer line ends the
	// connection.
	maxMessage = 4096
	// helloTimeout is how long instance 0 waits for a connection to say
	// who it is before it drops it (a health probe, a port scanner): an
	// instance says hello as soon as it is connected.
	helloTimeout = 5 * time.Second
	// writeTimeout bounds every write.
	writeTimeout = 10 * time.Second
	// maxStrangers caps the connections instance 0 holds that have not
	// said who they are; a newer one drops the oldest.
	maxStrangers = 64
	// maxRunID caps the length of a run id an instance accepts.
	maxRunID = 64
	// retryMin and retryMax bound the backoff between attempts to reach
	// instance 0.
	retryMin, retryMax = 50 * time.Millisecond, time.Second
)

// Config says who an instance is and where the others are.
type Config struct {
	// Instances is how many instances the run has (at least 1).
	Instances int
	// Instance is this instance's index, 0 to Instances-1. Instance 0
	// listens at Address; the others connect to it.
	Instance int
	// Address is the rendezvous's host:port.
	Address string
	// Plan identifies the test plan (PlanHash of the script and its
	// resolved options): instances with another plan are refused.
	Plan string
	// Timeout bounds the wait for all instances to arrive (and, for the
	// others, for instance 0 to appear); zero means DefaultTimeout.
	Timeout time.Duration
	// Lead is how far after all have arrived the start lies; zero means
	// DefaultLead.
	Lead time.Duration
	// Listening, when set, is called once instance 0 listens, with the
	// address it listens at (its port when Address's port is 0).
	Listening func(net.Addr)
	// Figures, on instance 0, asks the other instances to send their
	// figures every FiguresEvery after the start, and receives them;
	// nil asks for none.
	Figures      Receiver
	FiguresEvery time.Duration
}

// Run is what every instance of a run shares.
type Run struct {
	// ID is the run's id, drawn by instance 0.
	ID string
	// Start is when load starts, by instance 0's clock.
	Start time.Time
	// Ignored, on instance 0, says how many connections it ignored as not
	// instances of this run and why the first was; empty when none were.
	Ignored string
	// Figures, on another instance, sends its figures to instance 0
	// when instance 0 asked for them; nil when it did not. Close hangs
	// up.
	Figures *Sender
}

// PlanHash returns the hash that identifies a test plan made of parts (the
// script's bytes, the resolved options as JSON): hex SHA-256 over each
// part's length and bytes, so that parts cannot run into each other.
func PlanHash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Meeting is an instance's place in the rendezvous between its arrival
// and the start: it knows the run's id already.
type Meeting struct {
	// RunID is the run's id, drawn by instance 0, the same for all.
	RunID string
	// ready says this instance is ready, waits for the others and the
	// start, and returns the run and when (by this instance's clock) it
	// starts.
	ready func(ctx context.Context) (Run, time.Time, error)
	// close ends the meeting; hangUp, when set, also ends the exchange
	// of figures after the start.
	close, hangUp func()
}

// Arrive joins the rendezvous cfg describes and returns once instance 0
// has said the run's id: instance 0 listens (and returns at once), the
// others connect, retrying for cfg.Timeout while instance 0 is not up. A
// misconfigured instance is refused here. With one instance it draws the
// run id and listens nowhere. Call Start once the VUs are initialised,
// and Close in any case.
func Arrive(ctx context.Context, cfg Config) (*Meeting, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Instance != 0 {
		return arrive(ctx, cfg, func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", cfg.Address)
		})
	}
	if cfg.Instances == 1 {
		id := newRunID()
		return &Meeting{RunID: id, close: func() {},
			ready: func(ctx context.Context) (Run, time.Time, error) {
				now := time.Now()
				return Run{ID: id, Start: now}, now, ctx.Err()
			}}, nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("rendezvous: instance 0 cannot listen: %w", err)
	}
	if cfg.Listening != nil {
		cfg.Listening(ln.Addr())
	}
	return coordinate(cfg, ln), nil
}

// Start says this instance is ready (its VUs initialised), waits until
// all are and instance 0 has sent the start, then until the start, and
// returns the run. Instance 0 waits for the others for cfg.Timeout and
// names those that did not come; the others wait as long as instance 0
// may. Call it once.
func (m *Meeting) Start(ctx context.Context) (Run, error) {
	run, at, err := m.ready(ctx)
	m.close()
	if err != nil {
		m.Close()
		return Run{}, err
	}
	if !wait.Sleep(ctx, time.Until(at)) {
		return Run{}, fmt.Errorf("rendezvous: waiting for the start: %w", context.Cause(ctx))
	}
	return run, nil
}

// Close leaves the rendezvous: instance 0 stops listening and closes its
// connections, those that send figures after the start included; another
// instance hangs up. It may be called more than once, and after Start.
func (m *Meeting) Close() {
	m.close()
	if m.hangUp != nil {
		m.hangUp()
	}
}

// Join arrives and starts at once: for an instance that is ready when it
// arrives.
func Join(ctx context.Context, cfg Config) (Run, error) {
	m, err := Arrive(ctx, cfg)
	if err != nil {
		return Run{}, err
	}
	defer m.Close()
	return m.Start(ctx)
}

func (cfg *Config) validate() error {
	switch {
	case cfg.Instances > MaxInstances:
		return fmt.Errorf("rendezvous: %d instances: at most %d", cfg.Instances, MaxInstances)
	case cfg.Instances < 1:
		return fmt.Errorf("rendezvous: %d instances: at least 1 is needed", cfg.Instances)
	case cfg.Instance < 0 || cfg.Instance >= cfg.Instances:
		return fmt.Errorf("rendezvous: instance %d of %d: the index must be 0 to %d", cfg.Instance, cfg.Instances, cfg.Instances-1)
	case cfg.Instances > 1 && cfg.Address == "":
		return errors.New("rendezvous: no address: instance 0 listens at it, the others connect to it")
	case cfg.Timeout < 0 || cfg.Lead < 0:
		return fmt.Errorf("rendezvous: negative timeout %v or lead %v", cfg.Timeout, cfg.Lead)
	case cfg.Figures != nil && (cfg.FiguresEvery <= 0 || cfg.FiguresEvery > MaxFiguresEvery):
		return fmt.Errorf("rendezvous: figures every %v: the period must be above 0 and at most %v", cfg.FiguresEvery, MaxFiguresEvery)
	}
	if cfg.Figures == nil {
		cfg.FiguresEvery = 0
	}
	if cfg.Instances > 1 {
		if _, _, err := net.SplitHostPort(cfg.Address); err != nil {
			return fmt.Errorf("rendezvous: address %q: %w", cfg.Address, err)
		}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Lead == 0 {
		cfg.Lead = DefaultLead
	}
	return nil
}

// newRunID returns a random identifier for a run.
func newRunID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
