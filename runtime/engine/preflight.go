package engine

import (
	"context"
	"sync"

	"github.com/llmrun/llmrun/modules/llm"
)

// maxProbes bounds the targets the preflight probes: a script whose init
// code makes more clients than that has the first ones probed.
const maxProbes = 16

// Preflight sends one small request to each target the run is known to
// send to (the command line's, and those of the clients the init code
// made), concurrently, before any VU starts, and returns what each showed,
// in the targets' order. Its requests are in no statistic of the run.
func (e *Engine) Preflight(ctx context.Context) []llm.Probe {
	targets := e.llmModule.Targets(ctx)
	if len(targets) > maxProbes {
		targets = targets[:maxProbes]
	}
	probes := make([]llm.Probe, len(targets))
	var wg sync.WaitGroup
	for i, c := range targets {
		wg.Go(func() { probes[i] = c.Probe(ctx) })
	}
	wg.Wait()
	return probes
}
