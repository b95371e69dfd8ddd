package llm

import (
	"os/exec"
	"strings"
	"testing"
)

// The client is plain Go, usable without JavaScript: no package it
// imports is goja (the binding is llmjs).
func TestImportsNoJavaScript(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/dop251/goja") {
			t.Errorf("modules/llm imports %s", dep)
		}
	}
}
