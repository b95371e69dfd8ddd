package llmsim

// The KV cache's usage, as vLLM's vllm:kv_cache_usage_perc reports it:
// the blocks of PrefixBlockTokens tokens that the running sequences hold
// (their prompt and the tokens generated so far) against the pool of
// Config.KVCacheBlocks. A prompt block in the prefix cache that several
// running sequences share is held once, as vLLM's block pool shares it;
// blocks kept only by the prefix cache are free for reuse, as in vLLM,
// and do not count. The simulator bounds its batch by Config.MaxNumSeqs
// and never preempts, so a pool smaller than the batch needs reads above
// 1 where vLLM would preempt.

// blocksFor returns the blocks that tokens fill.
func blocksFor(tokens int) int {
	return (tokens + PrefixBlockTokens - 1) / PrefixBlockTokens
}

// kvAdmit allocates the blocks of s's prompt when the engine admits it:
// its cacheable prompt blocks by reference, the rest of its prompt alone.
func (e *engine) kvAdmit(s *sequence) {
	if e.cache != nil && s.cacheable {
		for _, h := range s.blocks {
			if e.kvRefs[h]++; e.kvRefs[h] == 1 {
				e.kvUsed++
			}
		}
		s.kvShared = len(s.blocks)
	}
	e.kvGrow(s, 0)
}

// kvGrow brings the blocks s holds alone up to its prompt and produced
// tokens.
func (e *engine) kvGrow(s *sequence, produced int) {
	private := max(0, blocksFor(s.promptTokens+produced)-s.kvShared)
	e.kvUsed += private - s.kvPrivate
	s.kvPrivate = private
}

// kvFree releases every block s holds.
func (e *engine) kvFree(s *sequence) {
	for _, h := range s.blocks[:s.kvShared] {
		if e.kvRefs[h]--; e.kvRefs[h] == 0 {
			delete(e.kvRefs, h)
			e.kvUsed--
		}
	}
	e.kvUsed -= s.kvPrivate
	s.kvShared, s.kvPrivate = 0, 0
}
