package vllmbench

import (
	"slices"
	"testing"
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
