package rendezvous

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/llmrun/llmrun/internal/wait"
)

// arrive is the side of an instance other than 0: it reaches instance 0
// (retrying while it is not up, for cfg.Timeout), says hello, and returns
// the meeting once welcomed with the run's id.
func arrive(ctx context.Context, cfg Config, dial func(context.Context) (net.Conn, error)) (*Meeting, error) {
	arriveCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	for backoff := retryMin; ; backoff = min(2*backoff, retryMax) {
		m, retry, err := attempt(arriveCtx, cfg, dial)
		if err == nil || !retry {
			return m, err
		}
		if !wait.Sleep(arriveCtx, backoff) {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("rendezvous: instance %d: waiting for instance 0: %w", cfg.Instance, context.Cause(ctx))
			}
			return nil, fmt.Errorf("rendezvous: instance %d: instance 0 not reached at %s within %v (last: %v): start instance 0 with the same --rendezvous address, or raise --rendezvous-timeout", cfg.Instance, cfg.Address, cfg.Timeout, err)
		}
	}
}

// attempt connects once and waits for instance 0's welcome. retry says
// whether a failure is worth another attempt (instance 0 not up yet, or
// the connection lost before a reply).
func attempt(ctx context.Context, cfg Config, dial func(context.Context) (net.Conn, error)) (*Meeting, bool, error) {
	conn, err := dial(ctx)
	if err != nil {
		return nil, true, err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	r := newReader(conn)
	m, retry, err := welcome(ctx, cfg, conn, r)
	if err != nil {
		conn.Close()
		return nil, retry, err
	}
	return m, false, nil
}

// welcome says hello on conn and reads instance 0's answer.
func welcome(ctx context.Context, cfg Config, conn net.Conn, r *bufio.Reader) (*Meeting, bool, error) {
	if err := send(conn, hello{Protocol: Protocol, Instance: cfg.Instance, Instances: cfg.Instances, Plan: cfg.Plan}); err != nil {
		return nil, true, err
	}
	deadline, _ := ctx.Deadline()
	var w reply
	if err := receive(r, conn, deadline, &w); err != nil {
		if errors.As(err, new(malformedError)) {
			return nil, false, notInstance0(cfg, err)
		}
		return nil, true, err
	}
	if err := refusal(cfg, w); err != nil {
		return nil, false, err
	}
	if err := checkWelcome(w); err != nil {
		return nil, false, notInstance0(cfg, err)
	}
	hangUp := &figuresCloser{conn: conn}
	streaming := false
	return &Meeting{
		RunID: w.RunID,
		ready: func(ctx context.Context) (Run, time.Time, error) {
			run, at, err := ready(ctx, cfg, w.RunID, conn, r)
			if run.Figures != nil {
				streaming = true
				run.Figures.close = hangUp.close
			}
			return run, at, err
		},
		close: func() {
			if !streaming {
				hangUp.close()
			}
		},
		hangUp: hangUp.close,
	}, false, nil
}

// ready says this instance is ready and waits for the start, as long as
// instance 0 may wait for the others (cfg.Timeout) and a write's time. The
// start must carry runID, the run id of the welcome.
func ready(ctx context.Context, cfg Config, runID string, conn net.Conn, r *bufio.Reader) (Run, time.Time, error) {
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	fail := func(err error) (Run, time.Time, error) {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return Run{}, time.Time{}, fmt.Errorf("rendezvous: instance %d: waiting for the start from instance 0: %w", cfg.Instance, err)
	}
	if err := send(conn, readiness{Ready: true}); err != nil {
		return fail(err)
	}
	var m reply
	if err := receive(r, conn, time.Now().Add(cfg.Timeout+writeTimeout), &m); err != nil {
		if errors.As(err, new(malformedError)) {
			return Run{}, time.Time{}, notInstance0(cfg, err)
		}
		return fail(err)
	}
	received := time.Now()
	if err := refusal(cfg, m); err != nil {
		return Run{}, time.Time{}, err
	}
	if err := checkStart(cfg, runID, m); err != nil {
		return Run{}, time.Time{}, notInstance0(cfg, err)
	}
	run := Run{ID: m.RunID, Start: time.Unix(0, m.Start)}
	if m.FiguresEvery > 0 {
		run.Figures = &Sender{Every: time.Duration(m.FiguresEvery), instance: cfg.Instance, conn: conn}
	}
	return run, received.Add(time.Duration(m.Delay)), nil
}

// refusal is the error instance 0's reply carries, if any, quoted when it
// holds what a terminal would not print as text.
func refusal(cfg Config, m reply) error {
	if m.Error == "" {
		return nil
	}
	why := strings.TrimPrefix(m.Error, "rendezvous: ")
	if strings.ContainsFunc(why, func(r rune) bool { return !unicode.IsPrint(r) }) {
		why = strconv.Quote(why)
	}
	return fmt.Errorf("rendezvous: instance 0 refused instance %d: %s", cfg.Instance, why)
}

// notInstance0 is the error of an answer no llmrun instance 0 sends.
func notInstance0(cfg Config, err error) error {
	return fmt.Errorf("rendezvous: instance %d: the peer at %s is not an llmrun instance 0 of protocol %d: %w: check --rendezvous", cfg.Instance, cfg.Address, Protocol, err)
}

// checkWelcome says what is wrong with instance 0's welcome, if anything.
func checkWelcome(w reply) error {
	if w.Protocol != 0 && w.Protocol != Protocol {
		return fmt.Errorf("it speaks protocol %d", w.Protocol)
	}
	return checkRunID(w.RunID)
}

// checkStart says what is wrong with instance 0's start, if anything: the
// run id must be the welcome's, the start a time, and the delay within
// what instance 0 may wait (the longer of the timeout and the lead).
func checkStart(cfg Config, runID string, m reply) error {
	maxDelay := max(cfg.Timeout, cfg.Lead)
	switch {
	case m.RunID != runID:
		return fmt.Errorf("run_id %q in the start, %q in the welcome", m.RunID, runID)
	case m.Start <= 0:
		return fmt.Errorf("start_unix_nano %d: not a time", m.Start)
	case m.Delay < 0 || m.Delay > int64(maxDelay):
		return fmt.Errorf("delay_ns %d: not within 0 and %v (--rendezvous-timeout)", m.Delay, maxDelay)
	case m.FiguresEvery < 0 || m.FiguresEvery > int64(MaxFiguresEvery):
		return fmt.Errorf("figures_every_ns %d: not within 0 and %v", m.FiguresEvery, MaxFiguresEvery)
	}
	return nil
}

// checkRunID says why id is not a run id, if it is not: a run id is one
// word of printable ASCII, at most maxRunID bytes, as it is printed and
// stored.
func checkRunID(id string) error {
	switch {
	case id == "":
		return errors.New("no run_id")
	case len(id) > maxRunID:
		return fmt.Errorf("run_id of %d bytes: at most %d", len(id), maxRunID)
	case strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r > '~' }):
		return fmt.Errorf("run_id %q: not one word of printable ASCII", id)
	}
	return nil
}
