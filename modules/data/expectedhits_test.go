package data

import (
	"strings"
	"testing"
)

func TestExpectedHits(t *testing.T) {
	type req struct {
		ids    []int64
		tokens int
		hits   int
	}
	for _, c := range []struct {
		name     string
		capacity int
		reqs     []req
	}{
		{"first request misses", 0, []req{{[]int64{1, 2}, 20, 0}}},
		{"shared leading blocks hit", 0, []req{
			{[]int64{1, 2, 3}, 30, 0},
			{[]int64{1, 2, 4}, 30, 20},
			{[]int64{1, 2, 3, 5}, 35, 30},
		}},
		{"a miss ends the hits", 0, []req{
			{[]int64{1, 2, 3}, 30, 0},
			{[]int64{1, 9, 3}, 30, 10},
		}},
		{"a partial block hits for the tokens sent of it", 0, []req{
			{[]int64{1, 2}, 14, 0},  // block 2: 4 tokens sent
			{[]int64{1, 2}, 20, 14}, // 10 + 4, then stops
			{[]int64{1, 2}, 17, 17}, // block 2 now known in full
		}},
		{"ids beyond the input are dropped", 0, []req{
			{[]int64{1, 2, 3}, 15, 0},
			{[]int64{1, 2, 3}, 30, 15},
		}},
		{"the tail is never a hit", 0, []req{
			{[]int64{1}, 25, 0},
			{[]int64{1}, 25, 10},
		}},
		{"least recently used evicted", 2, []req{
			{[]int64{1, 2}, 20, 0},
			{[]int64{3}, 10, 0}, // evicts 2, the tail of the first
			{[]int64{1, 2}, 20, 10},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := NewExpectedHits(10, c.capacity)
			if err != nil {
				t.Fatal(err)
			}
			var queried, hits int64
			for i, r := range c.reqs {
				if got := e.Add(r.ids, r.tokens); got != r.hits {
					t.Errorf("request %d: %d hits, want %d", i, got, r.hits)
				}
				queried += int64(r.tokens)
				hits += int64(r.hits)
			}
			if q, h := e.Totals(); q != queried || h != hits {
				t.Errorf("totals %d/%d, want %d/%d", h, q, hits, queried)
			}
			if want := float64(hits) / float64(queried); e.Rate() != want {
				t.Errorf("rate %v, want %v", e.Rate(), want)
			}
		})
	}
}

func TestNewExpectedHitsRefusesBadSizes(t *testing.T) {
	for _, c := range []struct {
		bs, capacity int
		want         string
	}{{0, 0, "block size"}, {512, -1, "capacity"}} {
		if _, err := NewExpectedHits(c.bs, c.capacity); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewExpectedHits(%d, %d): error %v, want one naming the %s", c.bs, c.capacity, err, c.want)
		}
	}
}
