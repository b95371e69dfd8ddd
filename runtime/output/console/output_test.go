package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/output/console"
)

// RenderJSON, behind textSummary(data), prints a summary read back from
// its JSON as the console prints it.
func TestRenderJSONMatchesTheConsole(t *testing.T) {
	s := sampleSummary()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := console.RenderJSON(b, false)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	c := &console.Console{Stdout: &want}
	if err := c.WriteSummary(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if got != want.String() {
		t.Errorf("RenderJSON:\n%s\nthe console:\n%s", got, want.String())
	}
	if _, err := console.RenderJSON([]byte("{"), false); err == nil || !strings.Contains(err.Error(), "reading the summary") {
		t.Errorf("RenderJSON of broken JSON: %v", err)
	}
}

// A quiet console prints no banner and starts no live view.
func TestQuietConsolePrintsNoBanner(t *testing.T) {
	var out strings.Builder
	c := &console.Console{Stdout: &out, Stderr: &out, Quiet: true}
	c.Start(console.Banner{Version: "v1", Script: "s.js"}, nil)()
	if out.Len() != 0 {
		t.Errorf("a quiet console printed %q", out.String())
	}
}
