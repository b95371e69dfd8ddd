package metrics

import "sync/atomic"

// ShardedCounter is a cumulative count that many goroutines add to at once
// without contending: each adds to a shard (Shard), as the Aggregator's
// users do, and readers sum the shards (Total). Adding is one atomic add,
// without lock or allocation, cheap enough for every token of a stream.
// The count never decreases.
type ShardedCounter struct {
	shards []CounterShard
}

// CounterShard is one shard of a ShardedCounter. Each sits alone on its
// cache lines, so that goroutines adding to different shards do not slow
// each other down.
type CounterShard struct {
	n atomic.Int64
	// The padding spaces shards 128 bytes apart: a cache line, or two
	// that the CPU fetches together.
	_ [120]byte
}

// NewShardedCounter returns a counter of n shards (at least one).
func NewShardedCounter(n int) *ShardedCounter {
	return &ShardedCounter{shards: make([]CounterShard, max(n, 1))}
}

// Shard returns the shard of the i-th user (for example VU i); users spread
// over the shards round-robin.
func (c *ShardedCounter) Shard(i int) *CounterShard {
	if i < 0 {
		i = -i
	}
	return &c.shards[i%len(c.shards)]
}

// Total returns the sum of the shards: every addition that happened before
// the call, and possibly some that happen during it.
func (c *ShardedCounter) Total() int64 {
	var sum int64
	for i := range c.shards {
		sum += c.shards[i].n.Load()
	}
	return sum
}

// Add adds n to the shard; n ≤ 0 is ignored, so that the count never
// decreases. Safe for concurrent use.
func (s *CounterShard) Add(n int64) {
	if n > 0 {
		s.n.Add(n)
	}
}
