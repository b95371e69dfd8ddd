package data

import (
	"container/list"
	"fmt"
	"sync"
)

// ExpectedHits is the prefix-cache hit rate a trace's hash ids imply,
// counted as its records are sent: of each request's input tokens, those
// of its leading hash blocks that an earlier request sent too. A block
// hits for the tokens of it an earlier request sent (all of it, or the
// first tokens of a last, partial block), and the first block that does
// not hit wholly ends the request's hits, as a server's prefix cache
// matches a prompt's leading blocks only. Tokens after the hash blocks
// never hit: BlockPrompt makes them the request's own.
//
// With a capacity, the cache keeps that many blocks, the least recently
// used evicted first (a request's blocks used last to first, as vLLM
// frees them, so that a prompt's tail goes before its head); without, it
// keeps every block, as a server whose cache holds the whole trace. It
// is safe for concurrent use.
type ExpectedHits struct {
	blockSize, capacity int

	mu      sync.Mutex
	blocks  map[int64]*list.Element // hash id → its entry in lru
	lru     *list.List              // of *hashBlock, most recently used first
	queried int64
	hits    int64
}

// hashBlock is a cached block: its id and how many of its tokens were
// sent (fewer than the block size when only ever the last of a prompt).
type hashBlock struct {
	id     int64
	tokens int
}

// NewExpectedHits returns the count of a trace whose hash blocks have
// blockSize tokens, with a cache of capacityBlocks blocks (0: unbounded).
func NewExpectedHits(blockSize, capacityBlocks int) (*ExpectedHits, error) {
	if blockSize < 1 {
		return nil, fmt.Errorf("expected prefix-cache hit rate: block size must be ≥ 1 token, got %d", blockSize)
	}
	if capacityBlocks < 0 {
		return nil, fmt.Errorf("expected prefix-cache hit rate: cache capacity must be ≥ 0 blocks (0: unbounded), got %d", capacityBlocks)
	}
	return &ExpectedHits{blockSize: blockSize, capacity: capacityBlocks, blocks: map[int64]*list.Element{}, lru: list.New()}, nil
}

// Add counts one request of inputTokens tokens whose leading blocks are
// hashIDs' (those beyond inputTokens dropped, as BlockPrompt does), and
// returns how many of its tokens the cache held.
func (e *ExpectedHits) Add(hashIDs []int64, inputTokens int) int {
	n := min(len(hashIDs), (max(inputTokens, 0)+e.blockSize-1)/e.blockSize)
	e.mu.Lock()
	defer e.mu.Unlock()
	hits := 0
	for k, id := range hashIDs[:n] {
		size := e.blockTokens(k, inputTokens)
		el, ok := e.blocks[id]
		if !ok {
			break
		}
		sent := el.Value.(*hashBlock).tokens
		hits += min(sent, size)
		if sent < size {
			break
		}
	}
	for k := n - 1; k >= 0; k-- {
		e.touch(hashIDs[k], e.blockTokens(k, inputTokens))
	}
	e.queried += int64(max(inputTokens, 0))
	e.hits += int64(hits)
	return hits
}

// blockTokens is the size of a request's block k: the block size, or
// what is left of its input tokens.
func (e *ExpectedHits) blockTokens(k, inputTokens int) int {
	return min(e.blockSize, inputTokens-k*e.blockSize)
}

// touch makes block id, of which tokens were sent, the most recently
// used, evicting the least recently used beyond the capacity.
func (e *ExpectedHits) touch(id int64, tokens int) {
	if el, ok := e.blocks[id]; ok {
		b := el.Value.(*hashBlock)
		b.tokens = max(b.tokens, tokens)
		e.lru.MoveToFront(el)
		return
	}
	e.blocks[id] = e.lru.PushFront(&hashBlock{id: id, tokens: tokens})
	if e.capacity > 0 && e.lru.Len() > e.capacity {
		last := e.lru.Back()
		delete(e.blocks, last.Value.(*hashBlock).id)
		e.lru.Remove(last)
	}
}

// Totals returns the input tokens counted and those the cache held.
func (e *ExpectedHits) Totals() (queried, hits int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.queried, e.hits
}

// Rate returns hits over queried tokens, 0 before any token.
func (e *ExpectedHits) Rate() float64 {
	queried, hits := e.Totals()
	if queried == 0 {
		return 0
	}
	return float64(hits) / float64(queried)
}
