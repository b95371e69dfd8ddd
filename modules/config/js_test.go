package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/config"
	"github.com/llmrun/llmrun/modules/modulestest"
)

func TestJSLoadAndParse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(path, []byte("levels: [1, 2]\nslo:\n  ttft_p99_ms: 1500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := modulestest.NewVU(t)
	v.Expose("config", config.Module{})
	v.SetGlobal("path", path)
	if got := v.Run(`const c = config.load(path); c.levels.join('+') + ' ' + c.slo.ttft_p99_ms`).String(); got != "1+2 1500" {
		t.Errorf("load: %q", got)
	}
	if got := v.Run(`config.parse('rate = 4.5', 'toml').rate`).ToFloat(); got != 4.5 {
		t.Errorf("parse: %v", got)
	}
	if _, err := v.Runtime().RunString(`config.parse('x', 'ini')`); err == nil || !strings.Contains(err.Error(), "want json, yaml or toml") {
		t.Errorf("bad format: %v", err)
	}
	v.LeaveInit()
	if _, err := v.Runtime().RunString(`config.load(path)`); err == nil || !strings.Contains(err.Error(), "init code") {
		t.Errorf("load outside init: %v", err)
	}
}
