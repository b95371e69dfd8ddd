package llmsim

import (
	"bufio"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ruleConfig is a configuration with instant steps and the given fault
// rules.
func ruleConfig(t *testing.T, seed int64, rules ...string) Config {
	t.Helper()
	cfg := fastConfig()
	cfg.Seed = seed
	cfg.PrefillBase, cfg.DecodeBase = 0, 0
	for _, s := range rules {
		r, err := ParseFaultRule(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Faults = append(cfg.Faults, r)
	}
	return cfg
}

// statuses sends n requests one after the other, so they arrive in order,
// and returns their statuses.
func statuses(t *testing.T, r *Running, n int) []int {
	t.Helper()
	c := testClient(t)
	out := make([]int, n)
	for i := range out {
		resp, err := post(t.Context(), c, r.URL(), "/v1/completions", completionsBody("x", map[string]any{"max_tokens": 1}))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		out[i] = resp.StatusCode
	}
	return out
}

func TestFaultRates(t *testing.T) {
	const n = 500
	rates := map[int]float64{500: 0.2, 429: 0.1, 200: 0.7}
	run := func(seed int64) []int {
		r := listen(t, ruleConfig(t, seed, "http_5xx:0.2", "http_429:0.1"))
		got := statuses(t, r, n)
		wantFaults(t, r, map[string]uint64{
			"http_5xx": uint64(countOf(got, 500)),
			"http_429": uint64(countOf(got, 429)),
		})
		return got
	}
	got := run(7)
	for status, p := range rates {
		// A fixed seed makes the count fixed; 4 standard deviations
		// accept any reasonable one.
		k, mean, sd := float64(countOf(got, status)), n*p, math.Sqrt(n*p*(1-p))
		if math.Abs(k-mean) > 4*sd {
			t.Errorf("%v answered %d times out of %d, want ≈ %v", status, int(k), n, mean)
		}
	}
	if again := run(7); !slices.Equal(got, again) {
		t.Error("the same seed faulted other requests")
	}
	if other := run(8); slices.Equal(got, other) {
		t.Error("another seed faulted the same requests")
	}
}

func countOf(s []int, v int) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// A mid-stream rule hits streams only: a non-streamed request that draws
// it is answered normally.
func TestMidStreamRulesSkipUnstreamed(t *testing.T) {
	r := listen(t, ruleConfig(t, 1, "reset:1:after=0"))
	if got := statuses(t, r, 5); countOf(got, 200) != 5 {
		t.Errorf("non-streamed statuses %v, want 200s", got)
	}
	for range 3 {
		if events, err := streamWithFault(t, r, "", 3); !errors.Is(err, syscall.ECONNRESET) || len(events) != 0 {
			t.Errorf("stream: %d events, %v; want a reset before any", len(events), err)
		}
	}
	wantFaults(t, r, map[string]uint64{"reset": 3})
}

// Faults leave no slot taken: with one slot, every faulted request in turn
// and then a plain one get through, and requests faulted before the
// engine are never queued.
func TestFaultsFreeSlots(t *testing.T) {
	cfg := fastConfig()
	cfg.MaxNumSeqs = 1
	r := listen(t, cfg)
	body := chatBody("hi", map[string]any{"max_tokens": 5, "ignore_eos": true, "stream": true})
	before := []string{"refuse", "http_429", "http_5xx", "wrong_content_type"}
	midStream := []string{"reset;after=2", "stall;after=2;duration=10ms", "malformed;after=2", "big_line;after=2",
		"error_event;after=2", "early_close;after=2", "early_close;after=9"}
	for _, fault := range append(before, midStream...) {
		conn, br, _ := rawPost(t, r, fault, body)
		io.Copy(io.Discard, br) // to the end, or the reset
		conn.Close()
	}

	// A client that gives up during a stall that lasts forever...
	conn, br, _ := rawPost(t, r, "stall;after=1;duration=forever", chatBody("hi", map[string]any{"max_tokens": 20000, "ignore_eos": true, "stream": true}))
	for events := 0; events < 2; { // role chunk, token
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			events++
		}
	}
	conn.Close()
	// ...and one that gives up during slow headers, never queued.
	conn, _, _ = rawPost(t, r, "slow_headers;duration=forever", body)
	eventually(t, 5*time.Second, "slow headers", func() bool { return r.Server().Stats().Faults["slow_headers"] == 1 })
	conn.Close()

	eventually(t, 5*time.Second, "slots freed", func() bool { st := r.Server().Stats(); return st.Running == 0 && st.Waiting == 0 })
	// Had its handler missed the client's leaving, the slow headers
	// would last forever, never counted as abandoned.
	eventually(t, 30*time.Second, "slow headers abandoned", func() bool { return r.Server().Stats().Abandoned == 1 })
	mustStream(t, r, "/v1/chat/completions", chatBody("hi", map[string]any{"max_tokens": 3}))
	// The client reads its [DONE] before the engine's next step frees
	// the request's slot.
	eventually(t, 5*time.Second, "the plain request's slot freed", func() bool { st := r.Server().Stats(); return st.Running == 0 && st.Waiting == 0 })
	if st, want := r.Server().Stats(), uint64(len(midStream)+2); st.Received != want {
		t.Errorf("stats %+v: want %d requests queued (the mid-stream faults, the stall, the plain one), none left", st, want)
	}
}

// The fault counts are served at GET /stats.
func TestStatsServeFaults(t *testing.T) {
	r := listen(t, ruleConfig(t, 1, "http_5xx:1"))
	statuses(t, r, 2)
	resp, err := http.Get(r.URL() + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(bufio.NewReader(resp.Body))
	if err != nil || !strings.Contains(string(data), `"Faults":{"http_5xx":2}`) {
		t.Errorf("/stats %s, %v", data, err)
	}
}
