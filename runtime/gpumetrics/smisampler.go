package gpumetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// SMIConfig configures an SMISampler.
type SMIConfig struct {
	// Command is the nvidia-smi to run: a path, or a name looked up in
	// PATH. Empty is "nvidia-smi".
	Command string
	// Interval is the time between runs. Zero is DefaultSMIInterval.
	Interval time.Duration
	// Timeout bounds one run; a run that takes longer is killed and
	// counted. Zero is DefaultSMITimeout.
	Timeout time.Duration
	// MaxReadings bounds the readings kept. When they reach it, every
	// second one is dropped and from then on every second one is kept, so
	// that they still span the whole run evenly, at half the resolution;
	// the newest reading and those taken when poked (at the run's marks)
	// are always kept. Zero is DefaultSMIMaxReadings.
	MaxReadings int
	// OnPoll, when set, is called from the sampler's goroutine after each
	// run with its reading or its error, a *PollError. It must not block.
	OnPoll func(Reading, error)
}

// The sampler's defaults and its cap on one run's output.
const (
	DefaultSMIInterval    = time.Second
	DefaultSMITimeout     = 5 * time.Second
	DefaultSMIMaxReadings = 7200
	maxSMIOutput          = 1 << 20
)

// The kinds of failed runs an SMISampler counts.
const (
	FailNotFound = "not_found" // the command is not there (any more)
	FailTimeout  = "timeout"   // the run took longer than the timeout
	FailExit     = "exit"      // nvidia-smi failed (exit status not 0)
	FailOutput   = "output"    // its output was too large or not its CSV
)

// PollError is a run of nvidia-smi that failed, as OnPoll gets it: the
// kind it is counted as (FailTimeout, ...) and why.
type PollError struct {
	Kind string
	Err  error
}

func (e *PollError) Error() string { return e.Err.Error() }

func (e *PollError) Unwrap() error { return e.Err }

// SMISampler runs nvidia-smi --query-gpu on an interval from its own
// goroutine and keeps the readings. Nothing it does blocks its caller.
type SMISampler struct {
	path     string
	cfg      SMIConfig
	poke     chan struct{}
	cancel   context.CancelFunc
	done     chan struct{}
	mu       sync.Mutex
	readings *series
	failures map[string]int
	lastErr  error
	query    int // the index in smiQueries of the field list the driver takes; the loop's own
}

// StartSMI looks nvidia-smi up and starts sampling it: at once, then every
// interval until ctx ends or Stop is called. A command that is not there
// is the one error it returns, and then nothing is started.
func StartSMI(ctx context.Context, cfg SMIConfig) (*SMISampler, error) {
	if cfg.Command == "" {
		cfg.Command = "nvidia-smi"
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultSMIInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultSMITimeout
	}
	if cfg.MaxReadings < 2 {
		cfg.MaxReadings = DefaultSMIMaxReadings
	}
	path, err := exec.LookPath(cfg.Command)
	if err != nil {
		return nil, fmt.Errorf("gpu metrics: %s cannot be run: %w (is this the GPU host, with NVIDIA's driver installed?)", cfg.Command, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &SMISampler{
		path:     path,
		cfg:      cfg,
		poke:     make(chan struct{}, 1),
		cancel:   cancel,
		done:     make(chan struct{}),
		failures: map[string]int{},
		readings: newSeries(cfg.MaxReadings),
	}
	go s.loop(ctx)
	return s, nil
}

// Poke asks for a run now (for a reading at a mark of the run), without
// waiting for it.
func (s *SMISampler) Poke() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// Stop ends the sampling and waits for a run under way to end (within its
// timeout).
func (s *SMISampler) Stop() {
	s.cancel()
	<-s.done
}

// Readings is a copy of the readings kept, oldest first.
func (s *SMISampler) Readings() []Reading {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readings.readings()
}

// Failures counts the failed runs by kind (FailTimeout, …), and gives the
// last failure's error.
func (s *SMISampler) Failures() (map[string]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := make(map[string]int, len(s.failures))
	for kind, n := range s.failures {
		counts[kind] = n
	}
	return counts, s.lastErr
}

func (s *SMISampler) loop(ctx context.Context) {
	defer close(s.done)
	ticker := time.NewTicker(s.cfg.Interval)
	defer ticker.Stop()
	poked := false
	for {
		s.poll(ctx, poked)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			poked = false
		case <-s.poke:
			poked = true
		}
	}
}

// poll runs nvidia-smi once and keeps its reading (pinned when poked) or
// counts its failure.
func (s *SMISampler) poll(ctx context.Context, poked bool) {
	reading, kind, err := s.read(ctx)
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	if err != nil {
		s.failures[kind]++
		s.lastErr = err
	} else {
		s.readings.add(reading, poked)
	}
	s.mu.Unlock()
	if s.cfg.OnPoll != nil {
		if err != nil {
			err = &PollError{Kind: kind, Err: err}
		}
		s.cfg.OnPoll(reading, err)
	}
}

// read runs nvidia-smi with the field list the driver takes, moving to the
// next list when the driver does not know a field of this one.
func (s *SMISampler) read(ctx context.Context) (Reading, string, error) {
	for {
		reading, kind, err := s.run(ctx, smiQueries[s.query])
		if kind != errUnknownField {
			return reading, kind, err
		}
		if s.query == len(smiQueries)-1 {
			return reading, FailExit, err
		}
		s.query++
	}
}

// errUnknownField is the kind of a run the driver refused for a field it
// does not know; read retries it with the next field list.
const errUnknownField = "unknown_field"

// run runs nvidia-smi once for fields and parses its output.
func (s *SMISampler) run(ctx context.Context, fields []string) (Reading, string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.path, "--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits")
	cmd.WaitDelay = time.Second
	stdout, stderr := cappedBuffer{full: cancel}, cappedBuffer{full: cancel}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	at := start.Add(time.Since(start) / 2)
	switch {
	case stdout.overflow || stderr.overflow:
		return Reading{}, FailOutput, fmt.Errorf("gpu metrics: %s printed more than %d bytes and was stopped", s.path, maxSMIOutput)
	case ctx.Err() == context.DeadlineExceeded:
		return Reading{}, FailTimeout, fmt.Errorf("gpu metrics: %s took longer than %v and was stopped", s.path, s.cfg.Timeout)
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return Reading{}, FailNotFound, fmt.Errorf("gpu metrics: %s cannot be run: %w", s.path, err)
	case err != nil:
		output := stdout.buf.String() + "\n" + stderr.buf.String()
		said := firstLine(output)
		if strings.Contains(output, "is not a valid field to query") {
			return Reading{}, errUnknownField, fmt.Errorf("gpu metrics: %s: %s", s.path, said)
		}
		return Reading{}, FailExit, fmt.Errorf("gpu metrics: %s failed (%v): %s", s.path, err, said)
	}
	reading, err := ParseSMI(&stdout.buf, fields, at)
	if err != nil {
		return Reading{}, FailOutput, fmt.Errorf("gpu metrics: %s: %w", s.path, err)
	}
	return reading, "", nil
}

// cappedBuffer keeps the first maxSMIOutput bytes written to it; at the
// first byte beyond, it notes the overflow and calls full, which stops
// the command printing them. (It has no ReadFrom, so that io.Copy goes
// through Write.)
type cappedBuffer struct {
	buf      bytes.Buffer
	overflow bool
	full     func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxSMIOutput - b.buf.Len(); len(p) > room {
		if !b.overflow {
			b.overflow = true
			b.full()
		}
		b.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.buf.Write(p)
}

// firstLine is the first non-empty line of text, cut to 200 bytes.
func firstLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = line[:200] + "…"
			}
			return line
		}
	}
	return "(it printed nothing)"
}
