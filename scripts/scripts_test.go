package scripts

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/js"
)

func TestEveryStockScenarioCompiles(t *testing.T) {
	names := Names()
	if len(names) < 2 {
		t.Fatalf("stock scenarios: %v", names)
	}
	for _, name := range names {
		src, err := Source(Prefix + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.CompileFS(Prefix+name+".js", src, Files()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestUnknownStockScenarioListsTheKnownOnes(t *testing.T) {
	_, err := Source("stock:warp-drive")
	if err == nil || !strings.Contains(err.Error(), "serving-point") {
		t.Fatalf("error %v, want one listing the stock scenarios", err)
	}
}
