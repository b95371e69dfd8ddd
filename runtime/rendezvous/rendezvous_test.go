package rendezvous

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// result is what one instance's Join returned, and when it returned.
type result struct {
	run      Run
	err      error
	returned time.Time
}

// group runs instances of one rendezvous as goroutines.
type group struct {
	t       *testing.T
	base    Config
	mu      sync.Mutex
	results map[int]result
	wg      sync.WaitGroup
}

func newGroup(t *testing.T, base Config) *group {
	return &group{t: t, base: base, results: map[int]result{}}
}

// join starts instance i with cfg changed by edit.
func (g *group) join(ctx context.Context, i int, edit func(*Config)) {
	cfg := g.base
	cfg.Instance = i
	if edit != nil {
		edit(&cfg)
	}
	g.wg.Go(func() {
		run, err := Join(ctx, cfg)
		r := result{run, err, time.Now()}
		g.mu.Lock()
		g.results[i] = r
		g.mu.Unlock()
	})
}

// wait waits for every instance started and returns what they returned.
func (g *group) wait() map[int]result {
	g.wg.Wait()
	return g.results
}

// listen starts instance 0 on 127.0.0.1:0 and returns the address it
// listens at.
func (g *group) listen(ctx context.Context) string {
	addr := make(chan string, 1)
	g.join(ctx, 0, func(c *Config) {
		c.Address = "127.0.0.1:0"
		c.Listening = func(a net.Addr) { addr <- a.String() }
	})
	select {
	case a := <-addr:
		return a
	case <-ctx.Done():
		g.t.Fatal("instance 0 did not listen")
		return ""
	}
}

// listening starts instance 0 of n on 127.0.0.1:0 with plan "p", checks
// for leaked goroutines at the end, and returns the group and its context.
func listening(t *testing.T, n int) (context.Context, *group) {
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	g := newGroup(t, Config{Instances: n, Plan: "p", Timeout: 30 * time.Second})
	g.base.Address = g.listen(ctx)
	return ctx, g
}

// noLeaks fails t if goroutines started during the test outlive it.
func noLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(30 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("%d goroutines before the test, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
			runtime.Gosched()
		}
	})
}

// sameRun checks that every instance got one run without error, and
// returns the spread of their return times.
func sameRun(t *testing.T, results map[int]result, n int) time.Duration {
	t.Helper()
	if len(results) != n {
		t.Fatalf("%d instances returned, want %d", len(results), n)
	}
	want := results[0]
	first, last := want.returned, want.returned
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("instance %d: %v", i, r.err)
		}
		if r.run.ID != want.run.ID || !r.run.Start.Equal(want.run.Start) || r.run.ID == "" {
			t.Errorf("instance %d got run %+v, instance 0 %+v", i, r.run, want.run)
		}
		if r.returned.Before(r.run.Start.Add(-50 * time.Millisecond)) {
			t.Errorf("instance %d returned at %v, before the start %v", i, r.returned, r.run.Start)
		}
		if r.returned.Before(first) {
			first = r.returned
		}
		if r.returned.After(last) {
			last = r.returned
		}
	}
	return last.Sub(first)
}

func TestAllArriveInAnyOrder(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		t.Run(strings.Repeat("i", n), func(t *testing.T) {
			noLeaks(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			g := newGroup(t, Config{Instances: n, Plan: PlanHash([]byte("script"), []byte("{}")), Timeout: 30 * time.Second, Lead: 200 * time.Millisecond})
			if n > 1 {
				g.base.Address = g.listen(ctx)
			}
			for _, i := range rand.Perm(n) {
				if i != 0 || n == 1 {
					g.join(ctx, i, nil)
				}
			}
			skew := sameRun(t, g.wait(), n)
			t.Logf("%d instances: the last returned %v after the first", n, skew)
		})
	}
}

// TestCoordinatorComesUpLate: the others find nobody, then something
// that hangs up on them, and keep trying until instance 0 is up.
func TestCoordinatorComesUpLate(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	g := newGroup(t, Config{Instances: 3, Address: addr, Plan: "p", Timeout: 30 * time.Second})
	g.join(ctx, 1, nil)
	g.join(ctx, 2, nil)
	notYet, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		conn, err := notYet.Accept()
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	notYet.Close()
	g.join(ctx, 0, nil)
	sameRun(t, g.wait(), 3)
}

// TestRefused: a misconfigured instance is refused with an error that
// names the difference; instance 0 goes on waiting, and the real instance
// joins it.
func TestRefused(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"another plan", func(c *Config) { c.Plan = "other" }, "instance 1 runs another test plan"},
		{"another instance count", func(c *Config) { c.Instances = 4 }, "instance 1 was told of 4 instances, instance 0 of 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, g := listening(t, 2)
			cfg := g.base
			cfg.Instance = 1
			tt.edit(&cfg)
			if _, err := Join(ctx, cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
			g.join(ctx, 1, nil)
			sameRun(t, g.wait(), 2)
		})
	}
}

// TestRefusedHello sends lines no llmrun of this version sends: each is
// refused to its sender alone, and the real instances still meet.
func TestRefusedHello(t *testing.T) {
	line := func(h hello) string {
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		line string
		want string
	}{
		{"null", "a hello without a protocol number: not an llmrun instance"},
		{"{}", "a hello without a protocol number"},
		{line(hello{Protocol: Protocol, Instance: 2, Instances: 2, Plan: "p"}), "an instance says it is instance 2: the others must be 1 to 1"},
		{line(hello{Protocol: Protocol, Instance: 0, Instances: 2, Plan: "p"}), "an instance says it is instance 0"},
		{line(hello{Protocol: Protocol + 1, Instance: 0, Instances: 2, Plan: "p"}), "the peer saying it is instance 0 speaks protocol 3, instance 0 speaks protocol 2"},
		{line(hello{Protocol: Protocol, Instance: 1, Instances: 2, Plan: "other"}), `instance 1 runs another test plan (hash "other"`},
		{line(hello{Protocol: Protocol, Instance: 1, Instances: 2, Plan: "\x1b[31mred"}), `instance 1 runs another test plan (hash "\x1b[31mred"`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			ctx, g := listening(t, 2)
			conn, err := net.Dial("tcp", g.base.Address)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte(tt.line + "\n")); err != nil {
				t.Fatal(err)
			}
			var m reply
			if err := receive(newReader(conn), conn, time.Now().Add(30*time.Second), &m); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(m.Error, tt.want) || strings.ContainsRune(m.Error, 0x1b) {
				t.Errorf("reply %+v, want an error saying %q, with no raw escape", m, tt.want)
			}
			g.join(ctx, 1, nil)
			results := g.wait()
			sameRun(t, results, 2)
			want := regexp.MustCompile(`^ignored 1 connection that was not an llmrun instance of this run, from 127\.0\.0\.1:\d+: `)
			if note := results[0].run.Ignored; !want.MatchString(note) || !strings.Contains(note, tt.want) {
				t.Errorf("instance 0's note %q, want one matching %s and saying %q", note, want, tt.want)
			}
		})
	}
}

// TestIgnoredAreReported: instance 0 whose instances did not come says
// how many connections it ignored, and why the first.
func TestIgnoredAreReported(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var addr string
	m, err := Arrive(ctx, Config{Instances: 2, Address: "127.0.0.1:0", Plan: "p", Timeout: 100 * time.Millisecond,
		Listening: func(a net.Addr) { addr = a.String() }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for range 3 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte("null\n")); err != nil {
			t.Fatal(err)
		}
		var m reply
		if err := receive(newReader(conn), conn, time.Now().Add(30*time.Second), &m); err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	_, err = m.Start(ctx)
	want := regexp.MustCompile(`instance 1 of 2 did not arrive at 127.0.0.1:0 within 100ms of instance 0 being ready: .* \(ignored 3 connections that were not llmrun instances of this run, the first from 127.0.0.1:\d+: a hello without a protocol number: not an llmrun instance\)$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("error %v, want one matching %s", err, want)
	}
}

// TestSameIndexTwice: whichever of the two comes second is refused; the
// first stays and the run meets.
func TestSameIndexTwice(t *testing.T) {
	ctx, g := listening(t, 3)
	cfg := g.base
	cfg.Instance = 1
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := Join(ctx, cfg)
			errs <- err
		}()
	}
	if err := <-errs; err == nil || !strings.Contains(err.Error(), "instance 1 arrived twice") {
		t.Errorf("the second instance 1: error %v, want instance 1 arrived twice", err)
	}
	g.join(ctx, 2, nil)
	if err := <-errs; err != nil {
		t.Errorf("the first instance 1: %v", err)
	}
	for _, i := range []int{0, 2} {
		if err := g.wait()[i].err; err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
}

func TestStrangerIsDropped(t *testing.T) {
	ctx, g := listening(t, 2)
	conn, err := net.Dial("tcp", g.base.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(strings.Repeat("x", 2*maxMessage))); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("instance 0 answered a message longer than its cap")
	}
	g.join(ctx, 1, nil)
	sameRun(t, g.wait(), 2)
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Instances: 0}, "at least 1"},
		{Config{Instances: MaxInstances + 1, Instance: 1, Address: "127.0.0.1:1", Timeout: time.Millisecond}, "10001 instances: at most 10000"},
		{Config{Instances: 3, Instance: 3, Address: "h:1"}, "instance 3 of 3: the index must be 0 to 2"},
		{Config{Instances: 3, Instance: -1, Address: "h:1"}, "the index must be 0 to 2"},
		{Config{Instances: 2, Instance: 1}, "no address"},
		{Config{Instances: 2, Instance: 1, Address: "nohost"}, `address "nohost"`},
	}
	for _, tt := range tests {
		_, err := Join(context.Background(), tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one saying %q", tt.cfg, err, tt.want)
		}
	}
}

func TestListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Join(context.Background(), Config{Instances: 2, Address: ln.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), "instance 0 cannot listen") {
		t.Errorf("error %v, want instance 0 cannot listen", err)
	}
}

func TestCanceled(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	g := newGroup(t, Config{Instances: 2, Plan: "p"})
	g.base.Address = g.listen(ctx)
	cancel()
	if err := g.wait()[0].err; !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
