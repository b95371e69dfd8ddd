package rendezvous

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// event is what a connection's goroutine tells the coordinator: an
// instance said hello (or could not), said it is ready, or left.
type event struct {
	conn  net.Conn
	hello hello
	err   error
	ready bool
	left  bool
}

// outcome is how the coordinator's wait ended.
type outcome struct {
	run Run
	err error
}

// coordinator is instance 0's side: the connections it holds and the
// instances that have arrived and are ready.
type coordinator struct {
	cfg    Config
	runID  string
	events chan event
	// own is closed when instance 0 is ready; done when the meeting ends.
	own, done       chan struct{}
	ownOnce, doneMu sync.Once
	result          chan outcome
	wg              sync.WaitGroup
	// readers are the connections' goroutines; those of the instances
	// kept (by index) for their figures after the start outlive the
	// meeting until hangUp. started is closed just before the start is
	// sent with figures asked for, hungUp when instance 0 hangs up.
	readers         sync.WaitGroup
	kept            map[net.Conn]int
	started, hungUp chan struct{}
	hangUpOnce      sync.Once
	// startedAt is when the start was sent, set before started is
	// closed: no instance sends figures before it.
	startedAt time.Time

	// The loop's own state.
	arrived map[int]net.Conn
	ready   map[int]bool
	conns   map[net.Conn]bool
	// strangers are the connections that have not said hello yet, oldest
	// first.
	strangers []net.Conn
	// ignored counts the connections dropped as not instances of this run;
	// firstIgnored says who the first was and why.
	ignored      int
	firstIgnored string
}

// coordinate starts instance 0's side on ln: it welcomes instances as they
// arrive, and once all and instance 0 itself are ready, sends the start.
// The meeting's Close closes ln and every connection.
func coordinate(cfg Config, ln net.Listener) *Meeting {
	c := &coordinator{
		cfg:     cfg,
		runID:   newRunID(),
		events:  make(chan event),
		own:     make(chan struct{}),
		done:    make(chan struct{}),
		result:  make(chan outcome, 1),
		started: make(chan struct{}),
		hungUp:  make(chan struct{}),
		arrived: map[int]net.Conn{},
		ready:   map[int]bool{},
		conns:   map[net.Conn]bool{},
	}
	accepted := make(chan net.Conn)
	c.wg.Go(func() { c.accept(ln, accepted) })
	c.wg.Go(func() {
		c.result <- c.loop(accepted)
		ln.Close()
		for conn := range c.conns {
			if _, ok := c.kept[conn]; !ok {
				conn.Close()
			}
		}
	})
	return &Meeting{RunID: c.runID, ready: c.start, close: c.close, hangUp: c.hangUp}
}

// start is instance 0's Meeting.Start: it is ready; wait for the others.
func (c *coordinator) start(ctx context.Context) (Run, time.Time, error) {
	c.ownOnce.Do(func() { close(c.own) })
	select {
	case o := <-c.result:
		c.result <- o
		return o.run, o.run.Start, o.err
	case <-ctx.Done():
		c.close()
		return Run{}, time.Time{}, fmt.Errorf("rendezvous: waiting for the instances: %w", context.Cause(ctx))
	}
}

// close ends the meeting and waits for its goroutines, but those reading
// the figures of the instances kept after the start (see hangUp).
func (c *coordinator) close() {
	c.doneMu.Do(func() { close(c.done) })
	c.wg.Wait()
	if len(c.kept) == 0 {
		c.readers.Wait()
	}
}

// loop runs the rendezvous until all are ready, it fails, or the meeting
// is closed.
func (c *coordinator) loop(accepted <-chan net.Conn) outcome {
	var timeout <-chan time.Time
	own := c.own
	for own != nil || len(c.ready) < c.cfg.Instances-1 {
		select {
		case conn := <-accepted:
			c.admit(conn)
		case ev := <-c.events:
			if err := c.handle(ev); err != nil {
				c.refuseAll(err)
				return outcome{err: err}
			}
		case <-own:
			own = nil
			t := time.NewTimer(c.cfg.Timeout)
			defer t.Stop()
			timeout = t.C
		case <-timeout:
			err := c.missing()
			c.refuseAll(err)
			return outcome{err: err}
		case <-c.done:
			err := errors.New("rendezvous: instance 0 stopped before the start")
			c.refuseAll(err)
			return outcome{err: err}
		}
	}
	return c.send()
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

// admit starts reading a new connection. When maxStrangers connections
// have not said who they are, the oldest of them is dropped: silent
// connections cannot keep the instances out, which say hello at once.
func (c *coordinator) admit(conn net.Conn) {
	if len(c.strangers) >= maxStrangers {
		oldest := c.strangers[0]
		c.strangers = c.strangers[1:]
		c.ignore(oldest, fmt.Sprintf("said nothing while %d newer connections came", maxStrangers))
	}
	c.strangers = append(c.strangers, conn)
	c.conns[conn] = true
	c.readers.Go(func() { c.read(conn) })
}

// identified takes conn off the strangers and reports whether it was one
// (not dropped already).
func (c *coordinator) identified(conn net.Conn) bool {
	for i, s := range c.strangers {
		if s == conn {
			c.strangers = append(c.strangers[:i], c.strangers[i+1:]...)
			return true
		}
	}
	return false
}

// ignore drops a connection that is not an instance of this run and
// counts it, remembering why for the first.
func (c *coordinator) ignore(conn net.Conn, why string) {
	if c.ignored == 0 {
		c.firstIgnored = fmt.Sprintf("from %s: %s", conn.RemoteAddr(), why)
	}
	c.ignored++
	c.drop(conn)
}

// silence says why a connection sent no hello.
func silence(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("said nothing within %v", helloTimeout)
	case errors.Is(err, io.EOF):
		return "hung up without a hello"
	}
	return err.Error()
}

// read reads a connection's hello, then whether it is ready, then waits
// for it to close: an instance that leaves before the start no longer
// counts as arrived. An instance kept for its figures after the start
// goes on to stream them.
func (c *coordinator) read(conn net.Conn) {
	r := newReader(conn)
	var h hello
	err := receive(r, conn, time.Now().Add(helloTimeout), &h)
	if !c.tell(event{conn: conn, hello: h, err: err}) || err != nil {
		return
	}
	// No deadline: an instance may take long to initialise. Before the
	// start its lines are short (its readiness); a line read as the start
	// is sent may be its first figures.
	conn.SetReadDeadline(time.Time{})
	limit := func() int {
		if _, ok := c.streamed(conn); ok {
			return MaxFigures
		}
		return maxMessage
	}
	for {
		line, err := readLine(r, limit)
		if i, ok := c.streamed(conn); ok {
			c.stream(i, conn, r, line, err)
			return
		}
		var m readiness
		if err != nil || len(line) > maxMessage || json.Unmarshal(line, &m) != nil {
			break
		}
		if m.Ready && !c.tell(event{conn: conn, hello: h, ready: true}) {
			return
		}
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
	i := ev.hello.Instance
	switch {
	case ev.left:
		if c.arrived[i] == ev.conn {
			delete(c.arrived, i)
			delete(c.ready, i)
		}
		c.drop(ev.conn)
	case ev.ready:
		if c.arrived[i] == ev.conn {
			c.ready[i] = true
		}
	case ev.err != nil:
		// Not an instance (a probe, a scanner) or one that failed before it
		// spoke: it retries, or never counted.
		if c.identified(ev.conn) {
			c.ignore(ev.conn, silence(ev.err))
		}
		c.drop(ev.conn)
	default:
		if !c.identified(ev.conn) {
			return nil
		}
		// A hello that cannot join is refused to its sender alone: the
		// run goes on waiting for the real instances.
		if err := c.check(ev.hello); err != nil {
			send(ev.conn, reply{Error: err.Error()})
			c.ignore(ev.conn, strings.TrimPrefix(err.Error(), "rendezvous: "))
			return nil
		}
		if err := send(ev.conn, reply{RunID: c.runID, Protocol: Protocol}); err != nil {
			c.drop(ev.conn)
			return nil
		}
		c.arrived[i] = ev.conn
	}
	return nil
}

// check says why h cannot join this run, if it cannot. The peer's words
// are quoted: they may be anything.
func (c *coordinator) check(h hello) error {
	switch {
	case h.Protocol == 0:
		return errors.New("rendezvous: a hello without a protocol number: not an llmrun instance")
	case h.Protocol != Protocol:
		return fmt.Errorf("rendezvous: the peer saying it is instance %d speaks protocol %d, instance 0 speaks protocol %d: run the same llmrun version on every instance", h.Instance, h.Protocol, Protocol)
	case h.Instances != c.cfg.Instances:
		return fmt.Errorf("rendezvous: instance %d was told of %d instances, instance 0 of %d: give every instance the same --instances", h.Instance, h.Instances, c.cfg.Instances)
	case h.Instance <= 0 || h.Instance >= c.cfg.Instances:
		return fmt.Errorf("rendezvous: an instance says it is instance %d: the others must be 1 to %d (0 is the one listening)", h.Instance, c.cfg.Instances-1)
	case c.arrived[h.Instance] != nil:
		return fmt.Errorf("rendezvous: instance %d arrived twice: give every instance its own index", h.Instance)
	case h.Plan != c.cfg.Plan:
		return fmt.Errorf("rendezvous: instance %d runs another test plan (hash %.12q, instance 0's is %.12q): give every instance the same script and options", h.Instance, h.Plan, c.cfg.Plan)
	}
	return nil
}

// drop forgets and closes a connection.
func (c *coordinator) drop(conn net.Conn) {
	delete(c.conns, conn)
	conn.Close()
}

// missing is the error of a rendezvous whose time ran out: the instances
// that did not arrive, and those that arrived but were not ready.
func (c *coordinator) missing() error {
	var absent, unready []string
	for i := 1; i < c.cfg.Instances; i++ {
		switch {
		case c.arrived[i] == nil:
			absent = append(absent, strconv.Itoa(i))
		case !c.ready[i]:
			unready = append(unready, strconv.Itoa(i))
		}
	}
	note := c.ignoredNote()
	if note != "" {
		note = " (" + note + ")"
	}
	var parts []string
	if len(absent) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s of %d did not arrive at %s", instances(absent), strings.Join(absent, ", "), c.cfg.Instances, c.cfg.Address))
	}
	if len(unready) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s arrived but did not finish initialising", instances(unready), strings.Join(unready, ", ")))
	}
	return fmt.Errorf("rendezvous: %s within %v of instance 0 being ready: start every instance with the same --instances and --rendezvous, or raise --rendezvous-timeout%s", strings.Join(parts, "; "), c.cfg.Timeout, note)
}

// ignoredNote says how many connections were ignored and why the first
// was, or nothing if none were.
func (c *coordinator) ignoredNote() string {
	switch c.ignored {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("ignored 1 connection that was not an llmrun instance of this run, %s", c.firstIgnored)
	}
	return fmt.Sprintf("ignored %d connections that were not llmrun instances of this run, the first %s", c.ignored, c.firstIgnored)
}

// instances is the noun for a list of n indices.
func instances(idx []string) string {
	if len(idx) == 1 {
		return "instance"
	}
	return "instances"
}

// refuseAll tells every arrived instance why the rendezvous failed.
func (c *coordinator) refuseAll(err error) {
	c.broadcast(func() reply { return reply{Error: err.Error()} })
}

// send draws the start and sends it to every instance, each with its
// delay from the moment of sending.
func (c *coordinator) send() outcome {
	run := Run{ID: c.runID, Start: time.Now().Add(c.cfg.Lead), Ignored: c.ignoredNote()}
	c.keepFigures(run.Start)
	err := c.broadcast(func() reply {
		return reply{RunID: run.ID, Start: run.Start.UnixNano(), Delay: max(0, int64(time.Until(run.Start))), FiguresEvery: int64(c.cfg.FiguresEvery)}
	})
	return outcome{run: run, err: err}
}

// broadcast sends every arrived instance the reply msg makes at the moment
// of sending, to all at once, so that one slow reader delays no other.
func (c *coordinator) broadcast(msg func() reply) error {
	errs := make([]error, c.cfg.Instances)
	var wg sync.WaitGroup
	for i, conn := range c.arrived {
		wg.Go(func() {
			if err := send(conn, msg()); err != nil {
				errs[i] = fmt.Errorf("rendezvous: sending to instance %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
