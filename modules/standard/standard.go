// Package standard is the set of JavaScript modules llmrun's scripts can
// import besides 'llm': 'metrics', 'llmrun' (check, sleep, group),
// 'llmrun/config' (settings files) and 'data' (prompts, lengths,
// datasets). It is the one place that lists them, so adding a module to
// llmrun is one line here. The 'llm' module is not in the set: the engine
// makes it itself, with the hooks through which the run sees every
// request (records, errors, early stop, token arrivals).
package standard

import (
	"fmt"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/checks"
	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/modules/metrics/metricsjs"
	"github.com/llmrun/llmrun/modules/scriptpath"
	"github.com/llmrun/llmrun/modules/settings"
)

// Options are what the standard modules take from the run.
type Options struct {
	// Seed seeds the data module's random streams (--seed).
	Seed int64
	// Tokenizer is the default tokenizer spec (--tokenizer); "" is the
	// default encoding.
	Tokenizer string
	// Paths finds the files the modules read for the script (datasets,
	// tokenizer and configuration files) and tells its FileRead of
	// them; nil: relative paths are the working directory's.
	Paths *scriptpath.Resolver
	// TextSummary renders the console summary from the JSON of a
	// summary, for the script's textSummary(data); nil makes
	// textSummary throw.
	TextSummary func(summaryJSON []byte, color bool) (string, error)
}

// Modules returns a registry of the standard modules, configured with o.
func Modules(o Options) *modules.Registry {
	r := modules.NewRegistry()
	for _, m := range []struct {
		name   string
		module modules.Module
	}{
		{"metrics", metricsjs.Module{}},
		{"llmrun", checks.Module{TextSummary: o.TextSummary}},
		{"llmrun/config", settings.Module{Paths: o.Paths}},
		{"data", &data.Module{Seed: o.Seed, Tokenizer: o.Tokenizer, Paths: o.Paths}},
	} {
		if err := r.Register(m.name, m.module); err != nil {
			// The names above are constants: only a mistake in this list
			// gets here, and TestModules catches it.
			panic(fmt.Sprintf("standard modules: %v", err))
		}
	}
	return r
}
