package runner

import (
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/standard"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output/console"
)

// StandardModules are the modules a script run with cfg can import
// besides 'llm': llmrun's standard set, seeded with the run's seed, with
// the run's default tokenizer, the files the script names found by
// cfg.Paths (engine.NewPaths(cfg) when nil: give cfg.Paths to the engine
// too, so that open() and the llm module share it), and textSummary
// rendering as the console does. Run uses them when cfg.Modules is nil.
func StandardModules(cfg engine.Config) *modules.Registry {
	paths := cfg.Paths
	if paths == nil {
		paths = engine.NewPaths(cfg)
	}
	return standard.Modules(standard.Options{
		Seed:        cfg.Seed,
		Tokenizer:   cfg.LLM.Tokenizer,
		Paths:       paths,
		TextSummary: console.RenderJSON,
	})
}
