package vllmbench

import (
	"fmt"
	"math"
	"time"

	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/runtime/executor"
)

// TimedTraceDataset is vLLM's name of the dataset of a Mooncake-format
// trace replayed at its timestamps (vllm bench serve --dataset-name
// timed_trace, vllm-project/vllm PR #39795).
const TimedTraceDataset = "timed_trace"

// TimedTrace is the timed_trace dataset's shape: how its timestamps and
// hash ids are read.
type TimedTrace struct {
	// ChunkHashSize is --timed-trace-chunk-hash-size: the tokens of one
	// hash id's block (Mooncake's traces: 512).
	ChunkHashSize int
	// SecMultiplier is --timed-trace-sec-multiplier: a timestamp times it
	// is the request's start in seconds. llmrun reads a Mooncake trace's
	// timestamps as milliseconds, so 0.001 replays at the trace's speed.
	SecMultiplier float64
}

// timedTraceDefaults are llmrun's: Mooncake's blocks and milliseconds.
func timedTraceDefaults() TimedTrace {
	return TimedTrace{ChunkHashSize: data.DefaultHashBlockTokens, SecMultiplier: 0.001}
}

// speed is the trace-replay executor's speed that SecMultiplier says: a
// millisecond timestamp scaled to SecMultiplier seconds.
func (t TimedTrace) speed() float64 { return 0.001 / t.SecMultiplier }

// checkTimedTrace checks the timed_trace dataset's flags and those that
// it refuses: the trace's timestamps, not --request-rate, say when
// requests start, and its records are replayed once each.
func (o Options) checkTimedTrace() error {
	if o.DatasetName != TimedTraceDataset {
		return nil
	}
	t := o.TimedTrace
	switch {
	case o.DatasetPath == "":
		return fmt.Errorf("--dataset-name %s needs --dataset-path (a trace in Mooncake's JSONL)", TimedTraceDataset)
	case t.ChunkHashSize < 1:
		return fmt.Errorf("--timed-trace-chunk-hash-size must be at least 1, got %d", t.ChunkHashSize)
	case !(t.SecMultiplier > 0) || math.IsInf(t.SecMultiplier, 1) || math.IsInf(t.speed(), 1):
		return fmt.Errorf("--timed-trace-sec-multiplier must be a positive number, got %v", t.SecMultiplier)
	case !math.IsInf(o.RequestRate, 1):
		return fmt.Errorf("--request-rate %v: cannot be used with --dataset-name %s, whose timestamps say when requests start (scale them with --timed-trace-sec-multiplier)", o.RequestRate, TimedTraceDataset)
	case o.NumWarmups > 0:
		return fmt.Errorf("--num-warmups: cannot be used with --dataset-name %s, whose records are replayed once each, at their timestamps", TimedTraceDataset)
	}
	return nil
}

// traceSchedule is the timed_trace dataset's scenario: the trace-replay
// executor, at most --num-prompts records from the trace's start, each at
// its timestamp scaled by --timed-trace-sec-multiplier. At
// --max-concurrency (maxInfVUs without it) records wait, in order: none
// is dropped, as none is in vLLM. The window's duration, llmrun's
// longest run in the trace's time (or its longest duration, when that is
// shorter), keeps the executor starting records that waited long after
// the trace's end (it drops those it reaches a second late otherwise);
// the scenario still ends with its last request.
func (o Options) traceSchedule(tracePath string) map[string]any {
	limit := o.inFlight() // timed_trace refuses warmups
	speed := o.TimedTrace.speed()
	window := time.Duration(min(float64(executor.DurationLimit)*speed, float64(executor.DurationLimit)))
	return map[string]any{
		"executor": "trace-replay", "trace": tracePath, "format": "mooncake",
		"speed": speed, "limit": o.requests(), "window": map[string]string{"duration": window.String()},
		"preAllocatedVUs": min(limit, 16), "maxVUs": limit, "maxConcurrency": limit,
	}
}
