package rendezvous

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/llmrun/llmrun/internal/wait"
)

// join is the side of an instance other than 0: it reaches instance 0
// (retrying while it is not up), says hello, and waits for the run and
// its start.
func join(ctx context.Context, cfg Config, dial func(context.Context) (net.Conn, error)) (Run, error) {
	arriveCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	for backoff := retryMin; ; backoff = min(2*backoff, retryMax) {
		run, start, retry, err := attempt(ctx, arriveCtx, cfg, dial)
		if err == nil {
			return waitStart(ctx, run, time.Until(start))
		}
		if !retry {
			return Run{}, err
		}
		if !wait.Sleep(arriveCtx, backoff) {
			if ctx.Err() != nil {
				return Run{}, fmt.Errorf("rendezvous: instance %d: waiting for instance 0: %w", cfg.Instance, context.Cause(ctx))
			}
			return Run{}, fmt.Errorf("rendezvous: instance %d: no start from instance 0 at %s within %v (last: %v)", cfg.Instance, cfg.Address, cfg.Timeout, err)
		}
	}
}

// attempt connects once (while arriveCtx lasts) and waits for instance
// 0's reply: the run, and when by this instance's clock it starts. Once
// connected it waits for instance 0's own timeout (Timeout from now, and
// a write's time), so that instance 0 rather than its clock says which
// instances are missing. retry says whether a failure is worth another
// attempt (instance 0 not up yet, or the connection lost before a reply).
func attempt(ctx, arriveCtx context.Context, cfg Config, dial func(context.Context) (net.Conn, error)) (run Run, start time.Time, retry bool, err error) {
	conn, err := dial(arriveCtx)
	if err != nil {
		return Run{}, time.Time{}, true, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if err := send(conn, hello{Protocol: Protocol, Instance: cfg.Instance, Instances: cfg.Instances, Plan: cfg.Plan}); err != nil {
		return Run{}, time.Time{}, true, err
	}
	var m reply
	if err := receive(newReader(conn), conn, time.Now().Add(cfg.Timeout+writeTimeout), &m); err != nil {
		return Run{}, time.Time{}, true, err
	}
	received := time.Now()
	switch {
	case m.Error != "":
		return Run{}, time.Time{}, false, fmt.Errorf("rendezvous: instance 0 refused instance %d: %s", cfg.Instance, strings.TrimPrefix(m.Error, "rendezvous: "))
	case m.RunID == "" || m.Start == 0:
		return Run{}, time.Time{}, false, fmt.Errorf("rendezvous: instance %d: instance 0 sent no run id or start", cfg.Instance)
	}
	return Run{ID: m.RunID, Start: time.Unix(0, m.Start)}, received.Add(time.Duration(m.Delay)), false, nil
}
