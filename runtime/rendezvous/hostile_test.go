package rendezvous

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeInstance0 listens on 127.0.0.1 as an instance 0 that answers the
// first connection's hello with the line welcome and, when start is not
// empty, its readiness with the line start. It returns its address.
func fakeInstance0(t *testing.T, welcome, start string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(time.Minute))
		r := bufio.NewReader(conn)
		for _, answer := range []string{welcome, start} {
			if answer == "" {
				break
			}
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			if _, err := conn.Write([]byte(answer + "\n")); err != nil {
				return
			}
		}
		r.ReadString('\n')
	})
	return ln.Addr().String()
}

// TestForgedAnswersAreRefused: an instance refuses answers no llmrun
// instance 0 sends, naming the field, quoting what it quotes, at once.
func TestForgedAnswersAreRefused(t *testing.T) {
	const welcome = `{"run_id":"r1","protocol":2}`
	tests := []struct {
		name           string
		welcome, start string
		want           string
	}{
		{"null welcome", "null", "", "is not an llmrun instance 0 of protocol 2: no run_id"},
		{"empty welcome", "{}", "", "no run_id"},
		{"not JSON", "HTTP/1.1 400 Bad Request\r", "", "is not an llmrun instance 0 of protocol 2: a malformed message"},
		{"run id with a newline", `{"run_id":"a\nb"}`, "", `run_id "a\nb": not one word of printable ASCII`},
		{"run id with an escape", `{"run_id":"\u001b[31mred"}`, "", `run_id "\x1b[31mred": not one word`},
		{"run id with a space", `{"run_id":"a b"}`, "", `run_id "a b": not one word`},
		{"run id too long", `{"run_id":"` + strings.Repeat("a", maxRunID+1) + `"}`, "", "run_id of 65 bytes: at most 64"},
		{"another protocol", `{"run_id":"r1","protocol":3}`, "", "it speaks protocol 3"},
		{"refusal with an escape", `{"error":"\u001b[2Jgone"}`, "", `instance 0 refused instance 1: "\x1b[2Jgone"`},
		{"endless delay", welcome, `{"run_id":"r1","start_unix_nano":1,"delay_ns":9223372036854775807}`, "delay_ns 9223372036854775807: not within 0 and 5s"},
		{"negative delay", welcome, `{"run_id":"r1","start_unix_nano":1,"delay_ns":-1}`, "delay_ns -1: not within 0 and 5s"},
		{"another run id", welcome, `{"run_id":"r2","start_unix_nano":1,"delay_ns":1}`, `run_id "r2" in the start, "r1" in the welcome`},
		{"no start", welcome, `{"run_id":"r1","delay_ns":1}`, "start_unix_nano 0: not a time"},
		{"start not JSON", welcome, "\x1b[31m", "is not an llmrun instance 0 of protocol 2: a malformed message"},
		{"negative figures period", welcome, `{"run_id":"r1","start_unix_nano":1,"delay_ns":1,"figures_every_ns":-1}`, "figures_every_ns -1: not within 0 and 1h0m0s"},
		{"endless figures period", welcome, `{"run_id":"r1","start_unix_nano":1,"delay_ns":1,"figures_every_ns":9223372036854775807}`, "figures_every_ns 9223372036854775807: not within 0 and 1h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			addr := fakeInstance0(t, tt.welcome, tt.start)
			_, err := Join(ctx, Config{Instances: 2, Instance: 1, Address: addr, Plan: "p", Timeout: 5 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\n") || strings.Contains(err.Error(), "not reached") {
				t.Errorf("error %q: raw control characters, or a peer reached called not reached", err)
			}
		})
	}
}

// TestSilentConnectionsDoNotKeepInstancesOut: maxStrangers connections
// that say nothing do not delay the instances, which say hello at once.
func TestSilentConnectionsDoNotKeepInstancesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPipeGroup(Config{Instances: 3, Plan: "p", Timeout: 30 * time.Second, Lead: time.Second})
		t0 := time.Now()
		g.start(t.Context(), 0)
		for range maxStrangers {
			conn, err := g.net.dial(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
		}
		synctest.Wait()
		g.start(t.Context(), 1)
		g.start(t.Context(), 2)
		g.wg.Wait()
		for i, r := range g.results {
			if r.err != nil {
				t.Fatalf("instance %d: %v", i, r.err)
			}
			if want := t0.Add(time.Second); !r.returned.Equal(want) {
				t.Errorf("instance %d started at +%v, want +1s", i, r.returned.Sub(t0))
			}
		}
	})
}
