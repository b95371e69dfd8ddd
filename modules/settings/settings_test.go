package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseEveryFormatGivesTheSameSettings(t *testing.T) {
	want := map[string]any{
		"levels":       []any{int64(1), int64(4), int64(16)},
		"step":         "30s",
		"input_tokens": int64(512),
		"slo":          map[string]any{"ttft_p99_ms": 2000.5},
		"ignore_eos":   true,
		"model":        "llama",
	}
	docs := map[Format]string{
		JSON: `{"levels": [1, 4, 16], "step": "30s", "input_tokens": 512, "slo": {"ttft_p99_ms": 2000.5}, "ignore_eos": true, "model": "llama"}`,
		YAML: "levels: [1, 4, 16]\nstep: 30s\ninput_tokens: 512\nslo:\n  ttft_p99_ms: 2000.5\nignore_eos: true\nmodel: llama\n",
		TOML: "levels = [1, 4, 16]\nstep = \"30s\"\ninput_tokens = 512\nignore_eos = true\nmodel = \"llama\"\n[slo]\nttft_p99_ms = 2000.5\n",
	}
	for format, doc := range docs {
		got, err := Parse([]byte(doc), format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if format == JSON {
			// JSON numbers are float64, as in JavaScript.
			got["levels"] = []any{int64(1), int64(4), int64(16)}
			got["input_tokens"] = int64(512)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", format, got, want)
		}
	}
}

func TestParseErrorsSayWhere(t *testing.T) {
	tests := []struct {
		format Format
		doc    string
		want   string
	}{
		{JSON, "{\n  \"a\": 1,\n  \"b\": }", "line 3"},
		{YAML, "a: 1\nb: [1, 2\n", "yaml"},
		{TOML, "a = 1\nb = = 2\n", "line 2"},
		{JSON, "[1, 2]", "top level must be a table"},
		{YAML, "- 1\n- 2\n", "top level must be a table"},
	}
	for _, tc := range tests {
		_, err := Parse([]byte(tc.doc), tc.format)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: error %v, want one containing %q", tc.format, tc.doc, err, tc.want)
		}
	}
}

func TestLoadPicksTheFormatByExtension(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range map[string]string{"a.json": `{"x": 1}`, "a.yml": "x: 1\n", "a.yaml": "x: 1\n", "a.toml": "x = 1\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if x, ok := cfg["x"]; !ok || (x != int64(1) && x != 1.0) {
			t.Errorf("%s: x = %#v", name, cfg["x"])
		}
	}
	if _, err := Load(filepath.Join(dir, "a.ini")); err == nil || !strings.Contains(err.Error(), ".toml") {
		t.Errorf("unknown extension: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

func TestSettingsEnvThenFileThenDefault(t *testing.T) {
	defaults := map[string]any{"levels": []any{1.0, 2.0}, "step": "20s", "warmup": 0.0, "verbose": false, "slo": nil, "model": "m"}
	file := map[string]any{"step": "1m", "warmup": int64(3), "slo": 1500.0}
	env := map[string]string{"LEVELS": "4, 8,16", "VERBOSE": "true", "MODEL": ""}
	got, err := Settings(defaults, file, env)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"levels": []any{4.0, 8.0, 16.0}, "step": "1m", "warmup": int64(3), "verbose": true, "slo": 1500.0, "model": "m"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	for _, bad := range []map[string]string{{"WARMUP": "lots"}, {"LEVELS": "1,x"}, {"VERBOSE": "maybe"}} {
		if _, err := Settings(defaults, nil, bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// A file's values take the default's kind: a list written as the "1,2"
// string the environment would give, a number written as a string, a
// single number for a list of one; a value of another kind is an error
// naming the key.
func TestSettingsFileValuesTakeTheDefaultsKind(t *testing.T) {
	defaults := map[string]any{"rates": []any{1.0, 2.0}, "names": []any{"a"}, "warmup": 0.0, "verbose": false, "step": "20s"}
	tests := []struct {
		name string
		file map[string]any
		key  string
		want any
	}{
		{"list as a string", map[string]any{"rates": "1, 2,4"}, "rates", []any{1.0, 2.0, 4.0}},
		{"list as a list", map[string]any{"rates": []any{int64(3), 5.0}}, "rates", []any{int64(3), 5.0}},
		{"one number for a list", map[string]any{"rates": int64(8)}, "rates", []any{int64(8)}},
		{"strings list as a string", map[string]any{"names": "x,y"}, "names", []any{"x", "y"}},
		{"number as a string", map[string]any{"warmup": " 12 "}, "warmup", 12.0},
		{"boolean as a string", map[string]any{"verbose": "true"}, "verbose", true},
		{"duration string kept", map[string]any{"step": "1m"}, "step", "1m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Settings(defaults, tc.file, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[tc.key], tc.want) {
				t.Errorf("%s = %#v, want %#v", tc.key, got[tc.key], tc.want)
			}
		})
	}
	for _, bad := range []struct {
		file map[string]any
		want string
	}{
		{map[string]any{"rates": "1,x"}, `rates: want a comma-separated list of numbers; "x" is not one`},
		{map[string]any{"rates": map[string]any{"a": 1.0}}, "rates: want a list"},
		{map[string]any{"rates": []any{1.0, "two"}}, `rates: want a list of numbers; item 2 is the string "two"`},
		{map[string]any{"warmup": []any{1.0}}, "warmup: want a number, got a list"},
		{map[string]any{"verbose": 1.0}, "verbose: want true or false, got the number 1"},
	} {
		_, err := Settings(defaults, bad.file, nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: error %v, want it to contain %q", bad.file, err, bad.want)
		}
	}
}
