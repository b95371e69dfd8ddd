package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeNet is an in-memory network of one address for tests in a synctest
// bubble, where real sockets do not let time advance.
type pipeNet struct {
	mu sync.Mutex
	ln *pipeListener
}

type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (n *pipeNet) listen() *pipeListener {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ln = &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	return n.ln
}

func (n *pipeNet) dial(ctx context.Context) (net.Conn, error) {
	n.mu.Lock()
	ln := n.ln
	n.mu.Unlock()
	if ln == nil {
		return nil, errors.New("connection refused")
	}
	client, server := net.Pipe()
	select {
	case ln.conns <- server:
		return client, nil
	case <-ln.closed:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	return nil, errors.New("connection refused")
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// pipeGroup runs the instances of cfg on n, each started by its own call.
type pipeGroup struct {
	net     *pipeNet
	cfg     Config
	wg      sync.WaitGroup
	mu      sync.Mutex
	results map[int]result
}

func (g *pipeGroup) start(ctx context.Context, i int) {
	cfg := g.cfg
	cfg.Instance = i
	if err := cfg.validate(); err != nil {
		panic(err)
	}
	var ln net.Listener
	if i == 0 {
		ln = g.net.listen()
	}
	g.wg.Go(func() {
		var r result
		var m *Meeting
		var err error
		if i == 0 {
			m = coordinate(cfg, ln)
		} else {
			m, err = arrive(ctx, cfg, g.net.dial)
		}
		if r.err = err; err == nil {
			r.run, r.err = m.Start(ctx)
			m.Close()
			if r.err == nil && r.run.ID != m.RunID {
				r.err = fmt.Errorf("started run %q, welcomed to %q", r.run.ID, m.RunID)
			}
		}
		r.returned = time.Now()
		g.mu.Lock()
		g.results[i] = r
		g.mu.Unlock()
	})
}

func newPipeGroup(cfg Config) *pipeGroup {
	cfg.Address = "pipe:1"
	return &pipeGroup{net: &pipeNet{}, cfg: cfg, results: map[int]result{}}
}

func TestStartIsExactAfterLateArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPipeGroup(Config{Instances: 3, Plan: "p", Timeout: 30 * time.Second, Lead: time.Second})
		t0 := time.Now()
		g.start(t.Context(), 1)
		g.start(t.Context(), 0)
		time.Sleep(20 * time.Second)
		g.start(t.Context(), 2)
		g.wg.Wait()
		want := t0.Add(21 * time.Second)
		for i, r := range g.results {
			if r.err != nil {
				t.Fatalf("instance %d: %v", i, r.err)
			}
			if !r.run.Start.Equal(want) || !r.returned.Equal(want) || r.run.ID != g.results[0].run.ID {
				t.Errorf("instance %d: run %+v returned at +%v, want the start and return at +21s", i, r.run, r.returned.Sub(t0))
			}
		}
	})
}

func TestMissingInstancesAreNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPipeGroup(Config{Instances: 5, Plan: "p", Timeout: 30 * time.Second})
		t0 := time.Now()
		g.start(t.Context(), 0)
		g.start(t.Context(), 1)
		g.start(t.Context(), 3)
		g.wg.Wait()
		want := "instances 2, 4 of 5 did not arrive at pipe:1 within 30s of instance 0 being ready"
		for i, r := range g.results {
			if r.err == nil || !strings.Contains(r.err.Error(), want) {
				t.Errorf("instance %d: error %v, want one saying %q", i, r.err, want)
			}
		}
		if took := g.results[0].returned.Sub(t0); took != 30*time.Second {
			t.Errorf("instance 0 gave up after %v, want 30s", took)
		}
	})
}

func TestCoordinatorNeverComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPipeGroup(Config{Instances: 2, Plan: "p", Timeout: 10 * time.Second})
		t0 := time.Now()
		g.start(t.Context(), 1)
		g.wg.Wait()
		r := g.results[1]
		want := "instance 1: instance 0 not reached at pipe:1 within 10s (last: connection refused)"
		if r.err == nil || !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %v, want one saying %q", r.err, want)
		}
		if took := r.returned.Sub(t0); took < 10*time.Second || took > 11*time.Second {
			t.Errorf("gave up after %v, want 10s", took)
		}
	})
}

// TestLeftBeforeStart: an instance that arrives and leaves before the
// others no longer counts; the group waits for it to come back.
func TestLeftBeforeStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPipeGroup(Config{Instances: 3, Plan: "p", Timeout: 30 * time.Second})
		g.start(t.Context(), 0)
		ctx, cancel := context.WithCancel(t.Context())
		g.start(ctx, 1)
		synctest.Wait()
		cancel()
		synctest.Wait()
		g.start(t.Context(), 2)
		time.Sleep(time.Second)
		g.start(t.Context(), 1)
		g.wg.Wait()
		if g.results[0].err != nil || g.results[2].err != nil || g.results[0].run.ID != g.results[2].run.ID {
			t.Errorf("instance 0: %+v, instance 2: %+v, want one run", g.results[0], g.results[2])
		}
	})
}

func TestArrivedButNotReadyIsNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPipeGroup(Config{Instances: 3, Plan: "p", Timeout: 30 * time.Second})
		g.start(t.Context(), 0)
		g.start(t.Context(), 1)
		cfg := g.cfg
		cfg.Instance = 2
		if err := cfg.validate(); err != nil {
			t.Fatal(err)
		}
		m, err := arrive(t.Context(), cfg, g.net.dial)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		g.wg.Wait()
		want := "instance 2 arrived but did not finish initialising within 30s"
		for i, r := range g.results {
			if r.err == nil || !strings.Contains(r.err.Error(), want) {
				t.Errorf("instance %d: error %v, want one saying %q", i, r.err, want)
			}
		}
	})
}

// TestCoordinatorStops: instance 0 that stops before the start (its VUs
// failed to initialise) tells the others so.
func TestCoordinatorStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPipeGroup(Config{Instances: 2, Plan: "p", Timeout: 30 * time.Second})
		m := coordinate(g.cfg, g.net.listen())
		g.start(t.Context(), 1)
		synctest.Wait()
		m.Close()
		g.wg.Wait()
		want := "instance 0 refused instance 1: instance 0 stopped before the start"
		if err := g.results[1].err; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one saying %q", err, want)
		}
	})
}

// Before the start, an instance that said hello may say only short
// messages (its readiness): a line longer than maxMessage drops it once
// that much is read, as before the figures, and is not read on up to
// MaxFigures, which only the lines after the start may reach.
func TestLongLineBeforeTheStartIsCutAtMaxMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPipeGroup(Config{Instances: 2, Plan: "p", Timeout: 30 * time.Second, Figures: newFigures(), FiguresEvery: time.Second})
		g.start(t.Context(), 0)
		conn, err := g.net.dial(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := send(conn, hello{Protocol: Protocol, Instance: 1, Instances: 2, Plan: "p"}); err != nil {
			t.Fatal(err)
		}
		if _, err := newReader(conn).ReadString('\n'); err != nil {
			t.Fatalf("no welcome: %v", err)
		}
		// One write: net.Pipe hands it over only as far as instance 0
		// reads.
		n, err := conn.Write([]byte(strings.Repeat("x", 4*maxMessage)))
		if err == nil || n > 2*maxMessage {
			t.Errorf("instance 0 read %d bytes of a line before the start (error %v), want it to hang up after %d", n, err, maxMessage)
		}
		conn.Close()
		g.wg.Wait()
	})
}

// After the start, an instance that sends no figures at all, or sends a
// byte now and then but never a whole line, is named lost once minSilence
// has passed since the start without a line: its connection and its
// goroutine on instance 0 are not held for the rest of the run.
func TestSilentOrTricklingFiguresNameTheInstanceLost(t *testing.T) {
	for _, tt := range []struct {
		name string
		send func(conn net.Conn)
	}{
		{"nothing", func(net.Conn) {}},
		{"a byte every 20 s", func(conn net.Conn) {
			for range 10 {
				time.Sleep(20 * time.Second)
				if _, err := conn.Write([]byte("x")); err != nil {
					return
				}
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFigures()
				g := newPipeGroup(Config{Instances: 2, Plan: "p", Timeout: 30 * time.Second, Figures: f, FiguresEvery: time.Second})
				cfg0 := g.cfg
				if err := cfg0.validate(); err != nil {
					t.Fatal(err)
				}
				m0 := coordinate(cfg0, g.net.listen())
				defer m0.Close()
				cfg1 := g.cfg
				cfg1.Instance = 1
				var run1 Run
				var wg sync.WaitGroup
				wg.Go(func() {
					m1, err := arrive(t.Context(), cfg1, g.net.dial)
					if err == nil {
						run1, err = m1.Start(t.Context())
					}
					if err != nil {
						t.Error(err)
					}
				})
				run0, err := m0.Start(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				wg.Wait()
				defer run1.Figures.Close()
				go tt.send(run1.Figures.conn)
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
				defer cancel()
				f.await(t, ctx, "instance 1 lost", func() bool { return f.lost[1] != "" })
				if took := time.Since(run0.Start); f.lost[1] != "nothing heard for 30s" || took > minSilence+time.Second {
					t.Errorf("instance 1 lost for %q %v after the start, want for nothing heard for 30s at 30s", f.lost[1], took)
				}
			})
		})
	}
}
