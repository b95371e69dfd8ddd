package main

import (
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// writeResult writes s as the result file f names, as a run does.
func writeResult(f output.FileFlag, s *summary.Summary) error {
	return output.WriteFile(f.Path, s.WriteJSON)
}
