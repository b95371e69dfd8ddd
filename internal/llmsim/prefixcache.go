package llmsim

import "math/bits"

// PrefixBlockTokens is the size, in tokens, of the prefix cache's blocks
// (vLLM's default block size).
const PrefixBlockTokens = 16

// blockHasher cuts a token sequence into full blocks of PrefixBlockTokens
// and identifies each by a chained hash: the hash of the previous block's
// hash and the block's token ids, so that a block's hash stands for the
// whole prefix that ends with it. Tokens of a last, partial block are
// dropped, as vLLM caches full blocks only.
type blockHasher struct {
	blocks []uint64 // the hashes of the full blocks so far
	h      uint64   // the running hash: the last block's, then its ids
	n      int      // ids hashed into the current block
}

// Hashing constants (xxHash64's primes): one round per token id.
const (
	hashSeed   = 0x27d4eb2f165667c5
	hashPrime1 = 0x9e3779b185ebca87
	hashPrime2 = 0xc2b2ae3d27d4eb4f
)

// newBlockHasher returns a hasher with no tokens yet.
func newBlockHasher() blockHasher { return blockHasher{h: hashSeed} }

// add hashes one token id (or a role marker).
func (b *blockHasher) add(id uint64) {
	b.h = bits.RotateLeft64(b.h^(id*hashPrime2), 31) * hashPrime1
	if b.n++; b.n == PrefixBlockTokens {
		b.blocks = append(b.blocks, b.h)
		b.n = 0
	}
}

// addIDs hashes token ids.
func (b *blockHasher) addIDs(ids []int) {
	for _, id := range ids {
		b.add(uint64(id))
	}
}

// prefixCache is the simulated prefix (KV) cache: the hashes of the
// blocks whose KV is kept, evicted least recently used first. It is owned
// by the engine goroutine and not safe for concurrent use; its counters
// are read by Stats through the engine's atomics.
//
// Entries are kept in an arena of nodes linked into a list, most recently
// used first, and indexed by hash: a lookup allocates nothing, and the
// arena grows up to the capacity, then reuses the evicted nodes.
type prefixCache struct {
	capacity int
	index    map[uint64]int32 // block hash → node
	nodes    []cacheNode
	head     int32 // most recently used; -1 when empty
	tail     int32 // least recently used, evicted first
}

type cacheNode struct {
	hash       uint64
	prev, next int32 // -1 at the ends
}

// newPrefixCache returns a cache of capacity blocks, nil (no cache) when
// capacity is 0.
func newPrefixCache(capacity int) *prefixCache {
	if capacity <= 0 {
		return nil
	}
	return &prefixCache{capacity: capacity, index: map[uint64]int32{}, head: -1, tail: -1}
}

// match returns how many of the leading blocks are cached, without
// touching them.
func (c *prefixCache) match(blocks []uint64) int {
	for i, h := range blocks {
		if _, ok := c.index[h]; !ok {
			return i
		}
	}
	return len(blocks)
}

// touch makes blocks the most recently used, inserting those not cached
// and evicting the least recently used blocks beyond the capacity. Blocks
// are touched last to first, like vLLM's free queue, so that the first
// block ends most recent and a prompt's tail is evicted before its head:
// a block is of use only while the blocks before it are cached.
func (c *prefixCache) touch(blocks []uint64) {
	for i := len(blocks) - 1; i >= 0; i-- {
		h := blocks[i]
		if n, ok := c.index[h]; ok {
			c.unlink(n)
			c.pushFront(n)
			continue
		}
		var n int32
		if len(c.nodes) < c.capacity {
			n = int32(len(c.nodes))
			c.nodes = append(c.nodes, cacheNode{})
		} else {
			n = c.tail
			c.unlink(n)
			delete(c.index, c.nodes[n].hash)
		}
		c.nodes[n].hash = h
		c.index[h] = n
		c.pushFront(n)
	}
}

// len returns the number of cached blocks.
func (c *prefixCache) len() int { return len(c.index) }

func (c *prefixCache) unlink(n int32) {
	node := &c.nodes[n]
	if node.prev >= 0 {
		c.nodes[node.prev].next = node.next
	} else {
		c.head = node.next
	}
	if node.next >= 0 {
		c.nodes[node.next].prev = node.prev
	} else {
		c.tail = node.prev
	}
}

func (c *prefixCache) pushFront(n int32) {
	node := &c.nodes[n]
	node.prev, node.next = -1, c.head
	if c.head >= 0 {
		c.nodes[c.head].prev = n
	} else {
		c.tail = n
	}
	c.head = n
}
