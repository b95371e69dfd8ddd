package settings_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/modulestest"
	"github.com/llmrun/llmrun/modules/scriptpath"
	"github.com/llmrun/llmrun/modules/settings"
)

func TestJSLoadAndParse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(path, []byte("levels: [1, 2]\nslo:\n  ttft_p99_ms: 1500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := modulestest.NewVU(t)
	var read []string
	v.Expose("config", settings.Module{Paths: scriptpath.New(scriptpath.Config{Script: "script.js", FileRead: func(p string) { read = append(read, p) }})})
	v.SetGlobal("path", path)
	if got := v.Run(`const c = config.load(path); c.levels.join('+') + ' ' + c.slo.ttft_p99_ms`).String(); got != "1+2 1500" {
		t.Errorf("load: %q", got)
	}
	if len(read) != 1 || read[0] != path {
		t.Errorf("FileRead told %q, want %s", read, path)
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

func TestJSSettingsAndSeconds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.toml")
	if err := os.WriteFile(path, []byte("step = \"1m\"\nlevels = [1, 2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := modulestest.NewVU(t)
	v.Expose("config", settings.Module{})
	v.SetGlobal("__ENV", map[string]string{"CONFIG": path, "LEVELS": "8,16"})
	got := v.Run(`const p = config.settings({ levels: [1], step: '20s', pause: '30s' });
		[p.levels.join('+'), config.seconds(p.step), config.seconds(p.pause), config.seconds(2.5)].join(' ')`).String()
	if got != "8+16 60 30 2.5" {
		t.Errorf("settings/seconds: %q", got)
	}
	if _, err := v.Runtime().RunString(`config.seconds('soon')`); err == nil || !strings.Contains(err.Error(), "30s") {
		t.Errorf("bad duration: %v", err)
	}
}
