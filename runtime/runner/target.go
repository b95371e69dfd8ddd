package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/summary"
)

// preflightPassed reports whether the run may start after its preflight:
// no probe failed in a way no load can fix. It says on stderr what failed
// and what to fix, then note (a lesser finding, such as the model not
// being found, that the failure may explain; none when ""), and warns of
// the failures the run may get past, each line begun with command.
func preflightPassed(stderr io.Writer, command string, probes []summary.Probe, note string) bool {
	passed := true
	for _, p := range probes {
		switch {
		case p.Fatal:
			passed = false
			fmt.Fprintf(stderr, "%s: preflight: %s (model %s) failed with %s: %s\n  fix: %s\n", command, p.Target, orNone(p.Model), p.Class, p.Error, p.Fix)
		case !p.OK:
			fmt.Fprintf(stderr, "%s: preflight: warning: %s (model %s) failed with %s: %s; the run goes on, as load may get past it\n", command, p.Target, orNone(p.Model), p.Class, p.Error)
		}
	}
	if !passed {
		if note != "" {
			fmt.Fprintf(stderr, "%s: also: %s\n", command, note)
		}
		fmt.Fprintf(stderr, "%s: no load was sent; --no-preflight skips this check\n", command)
	}
	return passed
}

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// modelListTimeout bounds the GET /v1/models that finds the default model.
const modelListTimeout = 10 * time.Second

// discoverModel returns the first model the server lists, for requests
// that name none; "" with why when it cannot tell, which the run says
// once it knows whether the preflight failed (whose failure comes first).
// A configuration the client refuses (a bad base URL) is left for the
// engine, which reports it as invalid options.
func (r *run) discoverModel(ctx context.Context) (model, note string) {
	client, err := llm.NewClient(r.cfg.Engine.LLM)
	if err != nil {
		return "", ""
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, modelListTimeout)
	defer cancel()
	models, err := client.Models(ctx)
	if err != nil {
		return "", fmt.Sprintf("no --model given, and the server's model could not be found (%v); requests that name no model are sent without one", err)
	}
	return models[0], ""
}
