package vllmbench

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/executor"
)

// The prefix_repetition dataset repeats each prefix for as many requests
// (one more for the first num_prompts mod num_prefixes), in an order the
// seed shuffles, the same for the same seed.
func TestPrefixOrder(t *testing.T) {
	p := PrefixRepetition{NumPrefixes: 4}
	for _, n := range []int{40, 42} {
		order := p.prefixOrder(n, 7)
		counts := make([]int, p.NumPrefixes)
		for _, g := range order {
			counts[g]++
		}
		want := []int{10, 10, 10, 10}
		if n == 42 {
			want = []int{11, 11, 10, 10}
		}
		if !slices.Equal(counts, want) {
			t.Errorf("%d requests: %v per prefix, want %v", n, counts, want)
		}
		roundRobin := make([]int, n)
		for i := range roundRobin {
			roundRobin[i] = i % p.NumPrefixes
		}
		if slices.Equal(order, roundRobin) {
			t.Errorf("%d requests: %v, want them shuffled", n, order)
		}
		if again := p.prefixOrder(n, 7); !slices.Equal(again, order) {
			t.Errorf("seed 7 gave %v, then %v", order, again)
		}
		if other := p.prefixOrder(n, 8); slices.Equal(other, order) {
			t.Errorf("seeds 7 and 8 gave the same order %v", order)
		}
	}
}

// constantArrivalRate decodes the scenario of o as the engine does.
func constantArrivalRate(t *testing.T, o Options) *executor.ConstantArrivalRate {
	t.Helper()
	sc := o.scenario()
	if sc["executor"] != "constant-arrival-rate" {
		t.Fatalf("executor %v, want constant-arrival-rate", sc["executor"])
	}
	delete(sc, "executor")
	delete(sc, "warmup")
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	var c executor.ConstantArrivalRate
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return &c
}

// At a finite rate, every prompt has its planned start within the
// scenario's duration, however long the run: 900,000 prompts at 10/s
// last 25 h, past the 24 h bench once fixed.
func TestBenchScheduleHoldsEveryPrompt(t *testing.T) {
	for _, tc := range []struct {
		prompts, warmups int
		rate, burstiness float64
	}{
		{900_000, 0, 10, 1},
		{100, 5, 10, 0.5},
		{3, 0, 0.001, 1},
	} {
		o := Defaults()
		o.NumPrompts, o.NumWarmups, o.RequestRate, o.Burstiness = tc.prompts, tc.warmups, tc.rate, tc.burstiness
		if err := o.Validate(); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		// The schedule returns the starts within the duration: the
		// executor starts its first prompts+warmups of them.
		s := constantArrivalRate(t, o).Schedule(1)
		planned := 0
		for _, ok := s.Next(); ok && planned < tc.prompts+tc.warmups; _, ok = s.Next() {
			planned++
		}
		if want := tc.prompts + tc.warmups; planned != want {
			t.Errorf("%+v: %d planned starts within the scenario's duration, want all %d", tc, planned, want)
		}
	}
}

// A run whose last request would start after llmrun's longest duration
// is refused before it starts, naming the flags.
func TestBenchScheduleBeyondTheDurationLimit(t *testing.T) {
	o := Defaults()
	o.NumPrompts, o.RequestRate = 9_000_000, 0.1
	err := o.Validate()
	if err == nil || !strings.Contains(err.Error(), "--num-prompts 9000000") || !strings.Contains(err.Error(), "--request-rate 0.1") {
		t.Errorf("got %v, want a refusal naming --num-prompts and --request-rate", err)
	}
}

// The script every VU evaluates does not grow with the number of
// requests: their lengths and prefixes are the Collector's, held once.
func TestBenchScriptSizeIsFixed(t *testing.T) {
	for _, dataset := range []string{"random", "prefix_repetition"} {
		o := Defaults()
		o.DatasetName, o.NumPrompts, o.NumWarmups = dataset, 1_000_000, 10
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		src, err := Script(o, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(src) > 16<<10 {
			t.Errorf("%s: a script of %d bytes for 1,000,010 requests, want it independent of their number", dataset, len(src))
		}
		c := NewCollector(o)
		if dataset == "random" && (len(c.Inputs) != 1_000_010 || len(c.Outputs) != 1_000_010) {
			t.Errorf("the collector holds %d input and %d output lengths, want one of each per request", len(c.Inputs), len(c.Outputs))
		}
	}
	o := Defaults()
	o.NumPrompts, o.NumWarmups = MaxRequests, 1
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "limit of 10000000 requests") {
		t.Errorf("%d requests: %v, want the limit named", MaxRequests+1, err)
	}
}
