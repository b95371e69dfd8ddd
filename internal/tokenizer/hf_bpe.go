package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"unicode/utf8"
)

// hfBPE is a byte-pair encoding model (model.type "BPE"): a vocabulary and
// ranked merges of pairs of tokens. A pre-token starts as one unit per
// character (or per byte, see byteLevel), and the adjacent pair with the
// lowest merge rank, the leftmost on ties, merges until none can.
type hfBPE struct {
	// vocab maps a token's text to its ID. When byteLevel is set, the key
	// is the raw bytes the token's byte-level characters stand for.
	vocab map[string]int32
	// merges maps a pair of IDs (hfPairKey) to their merge.
	merges map[uint64]hfBPEMerge
	// byteLevel says pre-tokens arrive as raw bytes rather than as
	// byte-level characters: each byte b is one unit, of ID byteUnits[b]
	// (-1: its character is not in the vocabulary).
	byteLevel bool
	byteUnits [256]int32
	// unk is the ID of unk_token, -1 without one (or with one missing from
	// the vocabulary): a unit not in the vocabulary is then dropped, as the
	// tokenizers library does. fuseUnk makes a run of unknown units one unk.
	unk     int32
	fuseUnk bool
	// byteFallback holds the IDs of the tokens <0x00> to <0xFF> (-1 for
	// one missing), which spell a unit missing from the vocabulary byte by
	// byte; nil when byte_fallback is off.
	byteFallback *[256]int32
	// ignoreMerges: a pre-token in the vocabulary is one token, merges or
	// not.
	ignoreMerges bool
	// prefix is continuing_subword_prefix, which units but the first of a
	// pre-token carry; suffix is end_of_word_suffix, which the last carries.
	prefix, suffix string
	cache          hfBPECache
}

// hfBPEMerge is the merge of a pair of tokens: its rank (lower merges first)
// and the ID of the token it makes.
type hfBPEMerge struct {
	rank, id int32
}

// hfNoMerge is the rank of a pair that does not merge.
const hfNoMerge = math.MaxInt32

// hfBPEHeapThreshold is the number of units from which a pre-token merges
// with a heap (O(n log n)) rather than by scanning for the best pair
// (O(n²), faster for the short pre-tokens of most text).
const hfBPEHeapThreshold = 64

// hfBPEScratch is the working memory of the model, reused across calls.
type hfBPEScratch struct {
	syms  []hfBPESym
	nodes []hfBPENode
	heap  []hfBPECandidate
	key   []byte
}

// hfBPESym is a unit of a pre-token being merged by mergeScan, with the
// merge of it and the next unit (rank hfNoMerge if none).
type hfBPESym struct {
	id, rank, merged int32
}

// hfBPENode is a unit of a pre-token being merged by mergeHeap, linked to
// its neighbours (-1: none); id is -1 once merged into the unit before.
type hfBPENode struct {
	id, prev, next int32
}

// hfBPECandidate is a merge mergeHeap may make: of the unit at pos and the
// next, at rank.
type hfBPECandidate struct {
	rank, pos int32
}

func hfPairKey(a, b int32) uint64 {
	return uint64(uint32(a))<<32 | uint64(uint32(b))
}

// parseHFModel builds the model in raw, the part of tokenizer.json at path,
// and returns its vocabulary as the file has it.
func parseHFModel(raw json.RawMessage, path string) (*hfBPE, map[string]int32, error) {
	if hfIsNull(raw) {
		return nil, nil, fmt.Errorf("%s is missing", path)
	}
	var c struct {
		Type                    *string         `json:"type"`
		UnkToken                *string         `json:"unk_token"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
		FuseUnk                 bool            `json:"fuse_unk"`
		ByteFallback            bool            `json:"byte_fallback"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		Vocab                   json.RawMessage `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
	}
	if err := hfDecodeComponent(raw, path, &c); err != nil {
		return nil, nil, err
	}
	switch {
	case c.Type == nil && c.Merges == nil:
		return nil, nil, fmt.Errorf("%s.type is missing", path)
	case c.Type != nil && *c.Type != "BPE":
		return nil, nil, hfUnsupported(path, *c.Type, "BPE")
	case hfIsNull(c.Vocab):
		return nil, nil, fmt.Errorf("%s.vocab is missing", path)
	case hfIsNull(c.Merges):
		return nil, nil, fmt.Errorf("%s.merges is missing", path)
	}
	var vocab map[string]int32
	if err := hfDecodeComponent(c.Vocab, path+".vocab", &vocab); err != nil {
		return nil, nil, err
	}
	for tok, id := range vocab {
		if id < 0 || id >= hfMaxTokenID {
			return nil, nil, fmt.Errorf("%s.vocab[%q]: ID %d is out of range [0, %d)", path, tok, id, hfMaxTokenID)
		}
	}
	m := &hfBPE{vocab: vocab, unk: -1, fuseUnk: c.FuseUnk, ignoreMerges: c.IgnoreMerges}
	m.cache.seed = maphash.MakeSeed()
	if c.ContinuingSubwordPrefix != nil {
		m.prefix = *c.ContinuingSubwordPrefix
	}
	if c.EndOfWordSuffix != nil {
		m.suffix = *c.EndOfWordSuffix
	}
	if c.UnkToken != nil {
		if id, ok := vocab[*c.UnkToken]; ok {
			m.unk = id
		}
	}
	if c.ByteFallback {
		m.byteFallback = new([256]int32)
		for b := range m.byteFallback {
			id, ok := vocab[fmt.Sprintf("<0x%02X>", b)]
			if !ok {
				id = -1
			}
			m.byteFallback[b] = id
		}
	}
	pairs, err := parseHFMerges(c.Merges, path+".merges")
	if err != nil {
		return nil, nil, err
	}
	if err := m.setMerges(pairs, path); err != nil {
		return nil, nil, err
	}
	return m, vocab, nil
}

// parseHFMerges decodes merges, in either form: "a b" strings, or ["a", "b"]
// pairs (newer files, whose tokens may hold spaces).
func parseHFMerges(raw json.RawMessage, path string) ([][2]string, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if rest := bytes.TrimSpace(trimmed[1:]); len(rest) > 0 && rest[0] == '[' {
			var pairs [][]string
			if err := hfDecodeComponent(raw, path, &pairs); err != nil {
				return nil, err
			}
			out := make([][2]string, len(pairs))
			for i, p := range pairs {
				if len(p) != 2 {
					return nil, fmt.Errorf("%s[%d]: want a pair of tokens, have %d", path, i, len(p))
				}
				out[i] = [2]string{p[0], p[1]}
			}
			return out, nil
		}
	}
	var lines []string
	if err := hfDecodeComponent(raw, path, &lines); err != nil {
		return nil, err
	}
	out := make([][2]string, len(lines))
	for i, line := range lines {
		a, b, ok := strings.Cut(line, " ")
		if !ok || strings.Contains(b, " ") {
			return nil, fmt.Errorf("%s[%d]: %q is not two tokens separated by a space", path, i, line)
		}
		out[i] = [2]string{a, b}
	}
	return out, nil
}

// setMerges fills m.merges from pairs, in rank order.
func (m *hfBPE) setMerges(pairs [][2]string, path string) error {
	m.merges = make(map[uint64]hfBPEMerge, len(pairs))
	var buf []byte
	for i, p := range pairs {
		a, ok := m.vocab[p[0]]
		if !ok {
			return fmt.Errorf("%s.merges[%d]: %q is not in %s.vocab", path, i, p[0], path)
		}
		b, ok := m.vocab[p[1]]
		if !ok {
			return fmt.Errorf("%s.merges[%d]: %q is not in %s.vocab", path, i, p[1], path)
		}
		buf = append(append(buf[:0], p[0]...), strings.TrimPrefix(p[1], m.prefix)...)
		id, ok := m.vocab[string(buf)]
		if !ok {
			return fmt.Errorf("%s.merges[%d]: the merged token %q is not in %s.vocab", path, i, buf, path)
		}
		m.merges[hfPairKey(a, b)] = hfBPEMerge{rank: int32(i), id: id}
	}
	return nil
}

// setByteLevel switches m to pre-tokens of raw bytes, for a last
// pre-tokenizer ByteLevel: it rekeys the vocabulary by the bytes each
// token stands for (dropping tokens with characters outside the byte-level
// alphabet, which no pre-token can spell) and looks up each byte's unit.
// It says whether it did: with a prefix or suffix, m keeps byte-level
// characters.
func (m *hfBPE) setByteLevel() bool {
	if m.prefix != "" || m.suffix != "" {
		return false
	}
	raw := make(map[string]int32, len(m.vocab))
	for tok, id := range m.vocab {
		if b, ok := hfByteLevelDecode(tok); ok {
			raw[b] = id
		}
	}
	for b := range m.byteUnits {
		id, ok := m.vocab[hfByteLevelChars[b]]
		if !ok {
			id = -1
		}
		m.byteUnits[b] = id
	}
	m.vocab = raw
	m.byteLevel = true
	return true
}

// encode appends the IDs of the pre-token p to ids.
func (m *hfBPE) encode(p string, ids []int, sc *hfBPEScratch) []int {
	if p == "" {
		return ids
	}
	if m.ignoreMerges {
		if id, ok := m.vocab[p]; ok {
			return append(ids, int(id))
		}
	}
	cacheable := len(p) <= hfCacheMaxKey
	if cacheable {
		if cached, ok := m.cache.get(p); ok {
			for _, id := range cached {
				ids = append(ids, int(id))
			}
			return ids
		}
	}
	syms := m.units(p, sc)
	if len(syms) < hfBPEHeapThreshold {
		syms = m.mergeScan(syms)
	} else {
		syms = m.mergeHeap(syms, sc)
	}
	sc.syms = syms
	start := len(ids)
	for _, s := range syms {
		ids = append(ids, int(s.id))
	}
	if cacheable {
		m.cache.put(p, ids[start:])
	}
	return ids
}

// units splits p into its first units: characters (bytes when
// m.byteLevel), each its vocabulary ID, or spelled by byte-fallback
// tokens, or unk, or dropped.
func (m *hfBPE) units(p string, sc *hfBPEScratch) []hfBPESym {
	syms := sc.syms[:0]
	unkRun := false
	for i := 0; i < len(p); {
		var id int32
		var text string
		n := 1
		if m.byteLevel {
			id, text = m.byteUnits[p[i]], hfByteLevelChars[p[i]]
		} else {
			_, n = utf8.DecodeRuneInString(p[i:])
			text = p[i : i+n]
			id = m.unitID(text, i == 0, i+n == len(p), sc)
		}
		i += n
		if id >= 0 {
			syms = append(syms, hfBPESym{id: id})
			unkRun = false
			continue
		}
		if fallback, ok := m.appendFallback(syms, text); ok {
			syms = fallback
			unkRun = false
			continue
		}
		if m.unk >= 0 && !(m.fuseUnk && unkRun) {
			syms = append(syms, hfBPESym{id: m.unk})
		}
		unkRun = m.unk >= 0
	}
	return syms
}

// unitID returns the ID of the unit u, with the prefix unless it is first
// and the suffix if it is last; -1 if it is not in the vocabulary.
func (m *hfBPE) unitID(u string, first, last bool, sc *hfBPEScratch) int32 {
	var id int32
	var ok bool
	if !first && m.prefix != "" || last && m.suffix != "" {
		k := sc.key[:0]
		if !first {
			k = append(k, m.prefix...)
		}
		k = append(k, u...)
		if last {
			k = append(k, m.suffix...)
		}
		sc.key = k
		id, ok = m.vocab[string(k)]
	} else {
		id, ok = m.vocab[u]
	}
	if !ok {
		return -1
	}
	return id
}

// appendFallback appends to syms the byte-fallback tokens that spell
// text; false if byte fallback is off or misses one of them.
func (m *hfBPE) appendFallback(syms []hfBPESym, text string) ([]hfBPESym, bool) {
	if m.byteFallback == nil {
		return syms, false
	}
	for i := 0; i < len(text); i++ {
		if m.byteFallback[text[i]] < 0 {
			return syms, false
		}
	}
	for i := 0; i < len(text); i++ {
		syms = append(syms, hfBPESym{id: m.byteFallback[text[i]]})
	}
	return syms, true
}

// pair returns the merge of the tokens a and b.
func (m *hfBPE) pair(a, b int32) (hfBPEMerge, bool) {
	mg, ok := m.merges[hfPairKey(a, b)]
	return mg, ok
}

// setRank sets the merge of syms[i] and syms[i+1] on syms[i].
func (m *hfBPE) setRank(syms []hfBPESym, i int) {
	syms[i].rank = hfNoMerge
	if i+1 < len(syms) {
		if mg, ok := m.pair(syms[i].id, syms[i+1].id); ok {
			syms[i].rank, syms[i].merged = mg.rank, mg.id
		}
	}
}

// mergeScan merges syms, finding the best pair by a scan each time.
func (m *hfBPE) mergeScan(syms []hfBPESym) []hfBPESym {
	for i := range syms {
		m.setRank(syms, i)
	}
	for len(syms) > 1 {
		best, bestRank := -1, int32(hfNoMerge)
		for i := range syms {
			if syms[i].rank < bestRank {
				best, bestRank = i, syms[i].rank
			}
		}
		if best < 0 {
			break
		}
		syms[best].id = syms[best].merged
		syms = append(syms[:best+1], syms[best+2:]...)
		m.setRank(syms, best)
		if best > 0 {
			m.setRank(syms, best-1)
		}
	}
	return syms
}

// mergeHeap merges syms, keeping the candidate merges in a heap ordered by
// rank, then position; a candidate whose pair has changed since it was
// pushed is skipped when popped.
func (m *hfBPE) mergeHeap(syms []hfBPESym, sc *hfBPEScratch) []hfBPESym {
	if len(syms) < 2 {
		return syms
	}
	nodes := sc.nodes[:0]
	for i, s := range syms {
		nodes = append(nodes, hfBPENode{id: s.id, prev: int32(i - 1), next: int32(i + 1)})
	}
	nodes[len(nodes)-1].next = -1
	h := sc.heap[:0]
	for i := 0; i+1 < len(nodes); i++ {
		if mg, ok := m.pair(nodes[i].id, nodes[i+1].id); ok {
			h = hfHeapPush(h, hfBPECandidate{rank: mg.rank, pos: int32(i)})
		}
	}
	for len(h) > 0 {
		c := h[0]
		h = hfHeapPop(h)
		cur := &nodes[c.pos]
		if cur.id < 0 || cur.next < 0 {
			continue
		}
		next := &nodes[cur.next]
		mg, ok := m.pair(cur.id, next.id)
		if !ok || mg.rank != c.rank {
			continue
		}
		cur.id, cur.next, next.id = mg.id, next.next, -1
		if cur.next >= 0 {
			nodes[cur.next].prev = c.pos
			if mg, ok := m.pair(cur.id, nodes[cur.next].id); ok {
				h = hfHeapPush(h, hfBPECandidate{rank: mg.rank, pos: c.pos})
			}
		}
		if cur.prev >= 0 {
			if mg, ok := m.pair(nodes[cur.prev].id, cur.id); ok {
				h = hfHeapPush(h, hfBPECandidate{rank: mg.rank, pos: cur.prev})
			}
		}
	}
	out := syms[:0]
	for i := int32(0); i >= 0; i = nodes[i].next {
		out = append(out, hfBPESym{id: nodes[i].id})
	}
	sc.nodes, sc.heap = nodes, h
	return out
}

func (c hfBPECandidate) before(d hfBPECandidate) bool {
	return c.rank < d.rank || c.rank == d.rank && c.pos < d.pos
}

// hfHeapPush adds c to the binary min-heap h.
func hfHeapPush(h []hfBPECandidate, c hfBPECandidate) []hfBPECandidate {
	h = append(h, c)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].before(h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	return h
}

// hfHeapPop removes the least candidate, h[0], from the binary min-heap h.
func hfHeapPop(h []hfBPECandidate) []hfBPECandidate {
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].before(h[least]) {
			least = l
		}
		if r < len(h) && h[r].before(h[least]) {
			least = r
		}
		if least == i {
			return h
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}

const (
	// hfCacheShards and hfCacheShardSize bound the cache to 64 Ki
	// pre-tokens; a full shard is emptied.
	hfCacheShards    = 64
	hfCacheShardSize = 1024
	// hfCacheMaxKey is the longest pre-token, in bytes, the cache keeps.
	hfCacheMaxKey = 256
)

// hfBPECache maps pre-tokens to their IDs: common words recur, and a lookup
// is cheaper than merging. It is safe for concurrent use once seed is set.
type hfBPECache struct {
	seed   maphash.Seed
	shards [hfCacheShards]hfBPECacheShard
}

// hfBPECacheShard is one lock's part of a hfBPECache.
type hfBPECacheShard struct {
	mu sync.RWMutex
	m  map[string][]int32
}

func (c *hfBPECache) shard(key string) *hfBPECacheShard {
	return &c.shards[maphash.String(c.seed, key)%hfCacheShards]
}

func (c *hfBPECache) get(key string) ([]int32, bool) {
	s := c.shard(key)
	s.mu.RLock()
	ids, ok := s.m[key]
	s.mu.RUnlock()
	return ids, ok
}

// put caches ids for key; both are copied.
func (c *hfBPECache) put(key string, ids []int) {
	v := make([]int32, len(ids))
	for i, id := range ids {
		v[i] = int32(id)
	}
	s := c.shard(key)
	s.mu.Lock()
	if s.m == nil || len(s.m) >= hfCacheShardSize {
		s.m = make(map[string][]int32, hfCacheShardSize)
	}
	s.m[strings.Clone(key)] = v
	s.mu.Unlock()
}
