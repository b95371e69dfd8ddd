package summarize

import (
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
)

// convert converts each element of in with one; nil for nil, so that a
// list the engine left nil stays null in the document, and an empty one
// [].
func convert[From, To any](in []From, one func(From) To) []To {
	if in == nil {
		return nil
	}
	out := make([]To, len(in))
	for i, x := range in {
		out[i] = one(x)
	}
	return out
}

// errorCounts are the engine's counts of error messages as the document
// keeps them.
func errorCounts(in []engine.ErrorCount) []summary.ErrorCount {
	return convert(in, func(e engine.ErrorCount) summary.ErrorCount {
		return summary.ErrorCount{Message: e.Message, Count: e.Count}
	})
}

// chainStops are the chains of scenarios the engine stopped, as the
// document keeps them.
func chainStops(in []engine.ChainStop) []summary.ChainStop {
	return convert(in, func(c engine.ChainStop) summary.ChainStop {
		return summary.ChainStop{After: c.After, Reason: c.Reason, Skipped: c.Skipped}
	})
}

// Probes are what the preflight showed of each target, as the document
// keeps them (Summary.Preflight) and the console prints them.
func Probes(in []llm.Probe) []summary.Probe {
	return convert(in, func(p llm.Probe) summary.Probe {
		return summary.Probe{Target: p.Target, API: string(p.API), Model: p.Model, OK: p.OK, Status: p.Status, Class: string(p.Class),
			Error: p.Error, Fatal: p.Fatal, Fix: p.Fix, ModelListed: p.ModelListed, TTFT: p.TTFT, E2E: p.E2E, Stream: p.Stream,
			UsageReported: p.UsageReported, OutputTokens: p.OutputTokens, TokensPerChunk: p.TokensPerChunk, Reasoning: p.Reasoning,
			PrefixCacheReported: p.PrefixCacheReported}
	})
}
