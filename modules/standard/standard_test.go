package standard_test

import (
	"slices"
	"testing"

	"github.com/llmrun/llmrun/modules/standard"
)

// TestModules lists the names scripts import the standard modules by:
// they are the JS API, and 'llm' is the engine's own.
func TestModules(t *testing.T) {
	got := standard.Modules(standard.Options{Seed: 1}).Names()
	want := []string{"data", "llmrun", "llmrun/config", "metrics"}
	if !slices.Equal(got, want) {
		t.Errorf("names = %v, want %v", got, want)
	}
}
