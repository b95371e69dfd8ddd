package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// event is what a connection's goroutine tells the coordinator: an
// instance said hello (or could not), or an arrived instance left.
type event struct {
	conn  net.Conn
	hello hello
	err   error
	left  bool
}

// coordinator is instance 0's side: the connections it holds and the
// instances that have arrived.
type coordinator struct {
	cfg     Config
	events  chan event
	done    chan struct{}
	wg      sync.WaitGroup
	arrived map[int]net.Conn
	conns   map[net.Conn]bool
}

// coordinate accepts instances on ln until all have arrived, sends them
// the run, and waits for its start. It closes ln and every connection
// before it returns.
func coordinate(ctx context.Context, cfg Config, ln net.Listener) (Run, error) {
	c := &coordinator{
		cfg:     cfg,
		events:  make(chan event),
		done:    make(chan struct{}),
		arrived: map[int]net.Conn{},
		conns:   map[net.Conn]bool{},
	}
	accepted := make(chan net.Conn)
	c.wg.Go(func() { c.accept(ln, accepted) })
	defer func() {
		close(c.done)
		ln.Close()
		for conn := range c.conns {
			conn.Close()
		}
		c.wg.Wait()
	}()

	arriveCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	for len(c.arrived) < cfg.Instances-1 {
		select {
		case conn := <-accepted:
			c.admit(conn)
		case ev := <-c.events:
			if err := c.handle(ev); err != nil {
				c.refuseAll(err)
				return Run{}, err
			}
		case <-arriveCtx.Done():
			err := c.missing(ctx)
			c.refuseAll(err)
			return Run{}, err
		}
	}
	return c.start(ctx)
}

// accept hands ln's connections to the coordinator until ln closes.
func (c *coordinator) accept(ln net.Listener, accepted chan<- net.Conn) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		select {
		case accepted <- conn:
		case <-c.done:
			conn.Close()
			return
		}
	}
}

// admit starts reading a new connection, unless too many connections have
// not said who they are.
func (c *coordinator) admit(conn net.Conn) {
	if len(c.conns)-len(c.arrived) >= maxStrangers {
		conn.Close()
		return
	}
	c.conns[conn] = true
	c.wg.Go(func() { c.read(conn) })
}

// read reads a connection's hello, then waits for it to close: an
// instance that leaves before the start no longer counts as arrived.
func (c *coordinator) read(conn net.Conn) {
	r := newReader(conn)
	var h hello
	err := receive(r, conn, time.Now().Add(helloTimeout), &h)
	if !c.tell(event{conn: conn, hello: h, err: err}) || err != nil {
		return
	}
	var extra hello
	for receive(r, conn, time.Time{}, &extra) == nil {
	}
	c.tell(event{conn: conn, hello: h, left: true})
}

// tell hands ev to the coordinator; it reports false once the coordinator
// is done.
func (c *coordinator) tell(ev event) bool {
	select {
	case c.events <- ev:
		return true
	case <-c.done:
		return false
	}
}

// handle takes in one event; the error it returns ends the rendezvous.
func (c *coordinator) handle(ev event) error {
	if ev.left {
		if c.arrived[ev.hello.Instance] == ev.conn {
			delete(c.arrived, ev.hello.Instance)
		}
		c.drop(ev.conn)
		return nil
	}
	if ev.err != nil {
		// Not an instance (a probe, a scanner) or one that failed before it
		// spoke: it retries, or never counted.
		c.drop(ev.conn)
		return nil
	}
	if err := c.check(ev.hello); err != nil {
		send(ev.conn, reply{Error: err.Error()})
		return err
	}
	c.arrived[ev.hello.Instance] = ev.conn
	return nil
}

// check says why h cannot join this run, if it cannot.
func (c *coordinator) check(h hello) error {
	switch {
	case h.Protocol != Protocol:
		return fmt.Errorf("rendezvous: instance %d speaks protocol %d, instance 0 speaks %d: run the same llmrun version on every instance", h.Instance, h.Protocol, Protocol)
	case h.Instances != c.cfg.Instances:
		return fmt.Errorf("rendezvous: instance %d was told of %d instances, instance 0 of %d", h.Instance, h.Instances, c.cfg.Instances)
	case h.Instance <= 0 || h.Instance >= c.cfg.Instances:
		return fmt.Errorf("rendezvous: an instance says it is instance %d: the others must be 1 to %d (0 is the one listening)", h.Instance, c.cfg.Instances-1)
	case c.arrived[h.Instance] != nil:
		return fmt.Errorf("rendezvous: instance %d arrived twice: give every instance its own index", h.Instance)
	case h.Plan != c.cfg.Plan:
		return fmt.Errorf("rendezvous: instance %d runs another test plan (hash %.12s, instance 0's is %.12s): give every instance the same script and options", h.Instance, h.Plan, c.cfg.Plan)
	}
	return nil
}

// drop forgets and closes a connection.
func (c *coordinator) drop(conn net.Conn) {
	delete(c.conns, conn)
	conn.Close()
}

// missing is the error of a rendezvous whose time ran out: the instances
// that did not arrive, or why the wait ended.
func (c *coordinator) missing(ctx context.Context) error {
	if ctx.Err() != nil {
		return fmt.Errorf("rendezvous: waiting for the instances: %w", context.Cause(ctx))
	}
	var idx []string
	for i := 1; i < c.cfg.Instances; i++ {
		if c.arrived[i] == nil {
			idx = append(idx, strconv.Itoa(i))
		}
	}
	noun := "instances"
	if len(idx) == 1 {
		noun = "instance"
	}
	return fmt.Errorf("rendezvous: %s %s of %d did not arrive at %s within %v", noun, strings.Join(idx, ", "), c.cfg.Instances, c.cfg.Address, c.cfg.Timeout)
}

// refuseAll tells every arrived instance why the rendezvous failed.
func (c *coordinator) refuseAll(err error) {
	for _, conn := range c.arrived {
		send(conn, reply{Error: err.Error()})
	}
}

// start draws the run, sends it to every instance, and waits for its
// start.
func (c *coordinator) start(ctx context.Context) (Run, error) {
	run := Run{ID: newRunID(), Start: time.Now().Add(c.cfg.Lead)}
	idx := make([]int, 0, len(c.arrived))
	for i := range c.arrived {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var errs []error
	for _, i := range idx {
		m := reply{RunID: run.ID, Start: run.Start.UnixNano(), Delay: int64(time.Until(run.Start))}
		if err := send(c.arrived[i], m); err != nil {
			errs = append(errs, fmt.Errorf("rendezvous: sending the start to instance %d: %w", i, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Run{}, err
	}
	return waitStart(ctx, run, time.Until(run.Start))
}
