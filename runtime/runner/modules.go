package runner

import (
	"path/filepath"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/standard"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output/console"
)

// StandardModules are the modules a script run with cfg can import
// besides 'llm': llmrun's standard set, seeded with the run's seed, with
// the run's default tokenizer, relative paths looked up first in the
// script's directory (the working directory for a script built into the
// binary), textSummary rendering as the console does, and every file they
// read told to cfg.FileRead, as open() tells it. Run uses them
// when cfg.Modules is nil.
func StandardModules(cfg engine.Config) *modules.Registry {
	baseDir := ""
	if cfg.Source == nil {
		baseDir = filepath.Dir(cfg.ScriptPath)
	}
	return standard.Modules(standard.Options{
		Seed:        cfg.Seed,
		Tokenizer:   cfg.LLM.Tokenizer,
		BaseDir:     baseDir,
		TextSummary: console.RenderJSON,
		FileRead:    cfg.FileRead,
	})
}
