package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Every example runs end to end against the built-in simulator, shortened
// through its DURATION variable.
func TestExamplesRun(t *testing.T) {
	examples, err := filepath.Glob("../../examples/*.[jt]s")
	if err != nil || len(examples) < 2 {
		t.Fatalf("examples: %v %v", examples, err)
	}
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			export := filepath.Join(t.TempDir(), "summary.json")
			code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-e", "DURATION=1s", "--summary-export", export, ex)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			s := readSummary(t, export)
			if s.Serving.OK == 0 || s.Serving.Failed != 0 || len(s.ScriptErrors) != 0 {
				t.Errorf("serving %+v, script errors %v", s.Serving, s.ScriptErrors)
			}
			for _, c := range s.Checks {
				if c.Fails != 0 {
					t.Errorf("check %q failed %d times", c.Name, c.Fails)
				}
			}
			if strings.Contains(stdout, "✗") {
				t.Errorf("a check failed:\n%s", stdout)
			}
		})
	}
}
