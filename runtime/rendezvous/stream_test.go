package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// figures is a Receiver that keeps what it was told, and refuses the
// messages refuse names.
type figures struct {
	mu     sync.Mutex
	got    map[int][]string
	lost   map[int]string
	refuse string
	poke   chan struct{}
}

func newFigures() *figures {
	return &figures{got: map[int][]string{}, lost: map[int]string{}, poke: make(chan struct{}, 1)}
}

func (f *figures) Received(i int, msg []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.tell()
	m := strings.TrimSuffix(string(msg), "\n")
	if f.refuse != "" && m == f.refuse {
		return errors.New("not figures")
	}
	f.got[i] = append(f.got[i], m)
	return nil
}

func (f *figures) Lost(i int, why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.tell()
	if _, twice := f.lost[i]; twice {
		why = "twice: " + why
	}
	f.lost[i] = why
}

func (f *figures) tell() {
	select {
	case f.poke <- struct{}{}:
	default:
	}
}

// await waits until cond holds of what f was told, within ctx.
func (f *figures) await(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for {
		f.mu.Lock()
		ok := cond()
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.poke:
		case <-ctx.Done():
			f.mu.Lock()
			defer f.mu.Unlock()
			t.Fatalf("%v waiting for %s: received %v, lost %v", ctx.Err(), what, f.got, f.lost)
		}
	}
}

// figuresRun starts n instances on 127.0.0.1 whose instance 0 asks for
// figures into f, and returns instance 0's meeting and the others' runs
// and meetings by index, started.
func figuresRun(t *testing.T, ctx context.Context, n int, f *figures) (*Meeting, map[int]Run, map[int]*Meeting) {
	t.Helper()
	addr := make(chan string, 1)
	base := Config{Instances: n, Plan: "p", Timeout: 30 * time.Second, Lead: 10 * time.Millisecond}
	cfg0 := base
	cfg0.Address, cfg0.Figures, cfg0.FiguresEvery = "127.0.0.1:0", f, 50*time.Millisecond
	cfg0.Listening = func(a net.Addr) { addr <- a.String() }
	m0, err := Arrive(ctx, cfg0)
	if err != nil {
		t.Fatal(err)
	}
	base.Address = <-addr
	var wg sync.WaitGroup
	var mu sync.Mutex
	runs, meetings, errs := map[int]Run{}, map[int]*Meeting{}, []error{}
	for i := range n {
		wg.Go(func() {
			m := m0
			if i > 0 {
				cfg := base
				cfg.Instance = i
				var err error
				if m, err = Arrive(ctx, cfg); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
			run, err := m.Start(ctx)
			mu.Lock()
			defer mu.Unlock()
			runs[i], meetings[i] = run, m
			if err != nil {
				errs = append(errs, fmt.Errorf("instance %d: %w", i, err))
			}
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, m := range meetings {
			m.Close()
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return m0, runs, meetings
}

// After the start, each other instance sends instance 0 its figures on
// its own connection, at the period instance 0 asked for; one that hangs
// up is named lost while the others go on, and once instance 0 has gone,
// an instance's next sends fail (it is told, it is not held).
func TestFiguresReachInstance0AfterTheStart(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := newFigures()
	m0, runs, meetings := figuresRun(t, ctx, 3, f)
	if runs[0].Figures != nil {
		t.Errorf("instance 0 got a sender of figures")
	}
	for i := 1; i < 3; i++ {
		if s := runs[i].Figures; s == nil || s.Every != 50*time.Millisecond {
			t.Fatalf("instance %d: sender %+v, want one every 50ms", i, s)
		}
		if err := runs[i].Figures.Send(fmt.Appendf(nil, `{"from":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	f.await(t, ctx, "both instances' figures", func() bool { return len(f.got[1]) == 1 && len(f.got[2]) == 1 })
	if f.got[1][0] != `{"from":1}` || f.got[2][0] != `{"from":2}` {
		t.Errorf("received %v", f.got)
	}
	meetings[1].Close()
	f.await(t, ctx, "instance 1 lost", func() bool { return f.lost[1] != "" })
	if f.lost[1] != "connection closed" || f.lost[2] != "" {
		t.Errorf("lost %v, want instance 1 alone, its connection closed", f.lost)
	}
	if err := runs[2].Figures.Send([]byte(`{"from":2}`)); err != nil {
		t.Fatal(err)
	}
	f.await(t, ctx, "instance 2's second figures", func() bool { return len(f.got[2]) == 2 })

	m0.Close()
	var err error
	for range 100 {
		if err = runs[2].Figures.Send([]byte(`{}`)); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "instance 2: sending figures to instance 0") {
		t.Errorf("100 sends after instance 0 closed: error %v, want one saying instance 0 no longer reads", err)
	}
	if len(f.lost) != 1 {
		t.Errorf("lost %v after instance 0 hung up: it names no instance it left itself", f.lost)
	}
}

// What an instance sends after the start that is not figures (too long,
// or refused by the receiver) drops that instance alone, named with the
// reason; instance 0 reads the others on, and closes without waiting.
func TestHostileFiguresDropTheInstance(t *testing.T) {
	for _, tt := range []struct {
		name, msg, want string
	}{
		{"too long", strings.Repeat("x", MaxFigures+1), fmt.Sprintf("a message longer than %d bytes", MaxFigures)},
		{"refused", "\x1b[2Jgarbage", "sent what is not figures: not figures"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			f := newFigures()
			f.refuse = "\x1b[2Jgarbage"
			m0, runs, _ := figuresRun(t, ctx, 3, f)
			// Raw, past Send's own bound; instance 0 may close before
			// it has all.
			written := make(chan struct{})
			go func() {
				defer close(written)
				runs[1].Figures.conn.Write([]byte(tt.msg + "\n"))
			}()
			f.await(t, ctx, "instance 1 lost", func() bool { return f.lost[1] != "" })
			if f.lost[1] != tt.want || len(f.got[1]) != 0 {
				t.Errorf("instance 1 lost for %q, received %q; want it lost for %q", f.lost[1], f.got[1], tt.want)
			}
			if err := runs[2].Figures.Send([]byte(`{"ok":true}`)); err != nil {
				t.Fatal(err)
			}
			f.await(t, ctx, "instance 2's figures", func() bool { return len(f.got[2]) == 1 })
			m0.Close()
			<-written
		})
	}
}

// An instance that sends figures far faster than instance 0 asked for (a
// loop, not a period) is named lost, so that it cannot take instance 0's
// CPU; instance 0 reads the others on. Ten thousand lines in one write
// would take 250 s to be within the bound at 50 ms: no stall of the test
// machine reads them slowly enough.
func TestFiguresFasterThanAskedDropTheInstance(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := newFigures()
	m0, runs, _ := figuresRun(t, ctx, 3, f)
	const lines = 10_000
	written := make(chan struct{})
	go func() {
		defer close(written)
		runs[1].Figures.conn.Write([]byte(strings.Repeat("{}\n", lines)))
	}()
	f.await(t, ctx, "instance 1 lost", func() bool { return f.lost[1] != "" })
	if want := "sent figures faster than every 50ms, which instance 0 asked for"; f.lost[1] != want || len(f.got[1]) >= lines {
		t.Errorf("instance 1 lost for %q after %d messages; want it lost for %q before all %d", f.lost[1], len(f.got[1]), want, lines)
	}
	if err := runs[2].Figures.Send([]byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	f.await(t, ctx, "instance 2's figures", func() bool { return len(f.got[2]) == 1 })
	m0.Close()
	<-written
}
