package metrics

import (
	"sync"
	"testing"
)

// Users adding to their shards at once lose nothing; a negative or zero
// addition changes nothing, so the total never decreases.
func TestShardedCounter(t *testing.T) {
	c := NewShardedCounter(4)
	const users, each = 16, 10_000
	var wg sync.WaitGroup
	for u := range users {
		wg.Go(func() {
			s := c.Shard(u - users/2) // negative users too
			for range each {
				s.Add(1)
			}
			s.Add(-5)
			s.Add(0)
		})
	}
	wg.Wait()
	if got := c.Total(); got != users*each {
		t.Errorf("Total = %d, want %d", got, users*each)
	}
	if NewShardedCounter(0).Shard(7) == nil {
		t.Error("a counter of no shards must have one")
	}
}

// Adding to a shard allocates nothing.
func TestCounterShardAddAllocatesNothing(t *testing.T) {
	s := NewShardedCounter(2).Shard(1)
	if n := testing.AllocsPerRun(1000, func() { s.Add(1) }); n != 0 {
		t.Errorf("%v allocations per Add", n)
	}
}
