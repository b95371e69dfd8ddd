package main

import (
	"fmt"

	"github.com/llmrun/llmrun/bench/internal/simproc"
)

// startSimulator starts "llmrun sim" on addr (pinned by pin) and returns
// once it has printed the address it serves on; a simulator that cannot
// bind addr exits, and startSimulator returns its error with what it
// printed on stderr.
func startSimulator(bin, addr string, pin []string, args []string) (*simproc.Proc, error) {
	argv := append(append(append([]string{}, pin...), bin, "sim", "--addr", addr), args...)
	sim, err := simproc.StartQuiet(argv)
	if err != nil {
		return nil, fmt.Errorf("on %s: %w", addr, err)
	}
	return sim, nil
}
