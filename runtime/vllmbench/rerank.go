package vllmbench

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/llmrun/llmrun/modules/data"
)

// RerankBackend is vLLM's backend of rerank requests
// (async_request_vllm_rerank): POST {"model", "query", "documents",
// "truncate_prompt_tokens": -1} to an endpoint ending in "rerank", the
// llm module's Rerank API.
const RerankBackend = "vllm-rerank"

// RerankDataset is vLLM's dataset of rerank requests
// (RandomDatasetForReranking, vllm/benchmarks/datasets.py): one random
// query, and --num-prompts random documents sent --random-batch-size at
// a time with it.
const RerankDataset = "random-rerank"

// rerank says whether o is a rerank benchmark.
func (o Options) rerank() bool { return o.Backend == RerankBackend }

// rerankDocs are the documents of a rerank benchmark, and how many one
// request sends: --num-prompts and --random-batch-size, each one less
// with --no-reranker, whose first document vLLM makes the query.
func (o Options) rerankDocs() (docs, perRequest int) {
	if o.NoReranker {
		return o.NumPrompts - 1, o.RandomBatchSize - 1
	}
	return o.NumPrompts, o.RandomBatchSize
}

// requests is the number of the benchmark's requests: --num-prompts, or
// for a rerank benchmark its batches of documents.
func (o Options) requests() int {
	if !o.rerank() {
		return o.NumPrompts
	}
	docs, per := o.rerankDocs()
	return (docs + per - 1) / per
}

// rerankLengths are the token lengths of a rerank benchmark's query and
// of each of its documents, as vLLM's RandomDatasetForReranking draws
// them around --random-input-len: a query of half of it less the
// separator token and documents of the rest, so that a query and
// document pair has about --random-input-len tokens; with --no-reranker,
// both of --random-input-len. Drawn from the seed before the run: the
// query's, then those of the first n documents (rerankDocs has them all).
func (o Options) rerankLengths(n int) (query int, docs []int) {
	rng := rand.New(rand.NewPCG(uint64(o.Seed), rerankLengthsStream))
	draw := func(n int) int {
		low, high := o.randomRange(max(n, 1))
		return low + rng.IntN(high-low+1)
	}
	queryLen, docLen := o.RandomInputLen, o.RandomInputLen
	if !o.NoReranker {
		queryLen = o.RandomInputLen/2 - 1
	}
	query = draw(queryLen)
	if !o.NoReranker {
		docLen = o.RandomInputLen - query - 1
	}
	docs = make([]int, n)
	for i := range docs {
		docs[i] = draw(docLen)
	}
	return query, docs
}

// rerankLengthsStream keeps rerankLengths' random stream apart from the
// others a seed starts.
const rerankLengthsStream = 0x72657261 // "rera"

// checkRerank checks a rerank benchmark's backend, endpoint, dataset and
// batch, and that no other backend takes its dataset.
func (o Options) checkRerank() error {
	if !o.rerank() {
		if o.DatasetName == RerankDataset {
			return fmt.Errorf("--dataset-name %s: only --backend %s sends its documents", RerankDataset, RerankBackend)
		}
		return nil
	}
	switch {
	case !strings.HasSuffix(o.Endpoint, "rerank"):
		return fmt.Errorf("--endpoint %q: --backend %s needs a rerank endpoint: give --endpoint /v1/rerank, as vLLM's bench wants it too", o.Endpoint, RerankBackend)
	case o.DatasetName != RerankDataset:
		return fmt.Errorf("--backend %s: needs --dataset-name %s, the query and documents it sends", RerankBackend, RerankDataset)
	case o.RandomBatchSize < 1:
		return fmt.Errorf("--random-batch-size must be at least 1, got %d", o.RandomBatchSize)
	case o.NoReranker && (o.NumPrompts < 2 || o.RandomBatchSize < 2):
		return fmt.Errorf("--no-reranker needs --num-prompts and --random-batch-size of at least 2 (the first document is the query), got %d and %d", o.NumPrompts, o.RandomBatchSize)
	case o.RandomInputLen < 4 && !o.NoReranker:
		return fmt.Errorf("--random-input-len %d: a rerank pair needs at least 4 tokens (a query, a document and their separators)", o.RandomInputLen)
	}
	_, high := o.randomRange(o.RandomInputLen)
	return data.CheckPromptTokens("--random-input-len × (1 + --random-range-ratio)", high)
}
