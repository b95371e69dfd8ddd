// Package trace reads request traces (Mooncake / vLLM timed_trace JSONL,
// Azure LLM inference CSV, BurstGPT CSV and llmrun's generic JSONL) one
// record at a time, so that a trace of any size is replayed in bounded
// memory. It knows nothing of scripts or executors: a Reader turns lines
// into Records, which the trace-replay executor schedules and the bench
// datasets turn into prompts.
package trace

import (
	"time"
)

// Format names a trace file format.
type Format string

const (
	// Mooncake is Mooncake's trace JSONL (kvcache-ai/Mooncake), which
	// AIPerf replays as its mooncake_trace dataset: {"timestamp": ms,
	// "input_length": n, "output_length": n, "hash_ids": [...]}.
	Mooncake Format = "mooncake"
	// Azure is the Azure LLM inference trace CSV (2023 and 2024):
	// TIMESTAMP (a date and time), ContextTokens, GeneratedTokens.
	Azure Format = "azure"
	// BurstGPT is the BurstGPT CSV: Timestamp (seconds), Model, Request
	// tokens, Response tokens, Total tokens, Log Type.
	BurstGPT Format = "burstgpt"
	// JSONL is llmrun's generic trace: {"timestamp_ms": ms,
	// "input_tokens": n, "output_tokens": n, "hash_ids": [...], ...}.
	JSONL Format = "jsonl"
)

// Formats lists the formats a Reader reads, in the order the docs name them.
var Formats = []Format{Mooncake, Azure, BurstGPT, JSONL}

// Record is one request of a trace.
type Record struct {
	// Index is the record's position in the trace, from 0, counting
	// records (not lines: a CSV's header and blank lines are not records).
	Index int64
	// Start is when the request starts, as an offset from the trace's
	// first record (whose Start is 0).
	Start time.Duration
	// InputTokens and OutputTokens are the prompt's and the reply's
	// lengths in tokens.
	InputTokens, OutputTokens int
	// HashIDs name the prompt's blocks of tokens, in order: two records
	// with the same first k ids share their first k blocks (Mooncake's
	// blocks are 512 tokens). Empty when the format has none.
	HashIDs []int64
	// Fields are the record's other fields, for the script: a JSON
	// line's other keys with their JSON values, a CSV row's other columns
	// by their header's name, as strings. Nil when there are none.
	Fields map[string]any
}
