// Package data models the traffic of a benchmark: prompts synthesized to
// an exact token count (with a tokenizer from package tokenizer), prompt
// and output length distributions, datasets (ShareGPT, JSONL, CSV) loaded
// once and shared read-only by every VU, shared-prefix prompt groups for
// prefix-cache benchmarks, the prompts of a trace's records built from
// their hash ids, with the prefix-cache hit rate those imply
// (ExpectedHits), and images for chat requests (synthetic, from files, or
// named by a dataset). Module is its JavaScript binding, the 'data'
// module.
package data
