package runflags

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/scripts"
)

// parse parses a run's command line as llmrun run does, with an empty
// process environment.
func parse(t *testing.T, args ...string) (Args, int, bool, string) {
	t.Helper()
	fs := pflag.NewFlagSet("llmrun run", pflag.ContinueOnError)
	var stderr bytes.Buffer
	fs.SetOutput(&stderr)
	f := Flags{SendsNothing: true}
	f.Register(fs)
	a, code, ok := Parse(context.Background(), "llmrun run", fs, &f, args, &stderr, func(string) string { return "" })
	return a, code, ok, stderr.String()
}

func TestParse(t *testing.T) {
	script := filepath.Join(t.TempDir(), "a.js")
	if err := os.WriteFile(script, []byte("export default function () {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stock := scripts.Prefix + scripts.Names()[0]
	tests := []struct {
		name string
		args []string
		// check the parsed command line; "" when it is refused with
		// exit 2 and an error containing wantErr.
		check   func(*testing.T, Args)
		wantErr string
	}{
		{"stages in order", []string{"-s", "30s:10", "--stage", "1m:0", script}, func(t *testing.T, a Args) {
			var got []string
			for _, s := range a.EngineConfig(&bytes.Buffer{}).Overrides.Stages {
				got = append(got, s.String())
			}
			if strings.Join(got, ",") != "30s:10,1m0s:0" {
				t.Errorf("stages %v, want 30s:10 then 1m0s:0", got)
			}
		}, ""},
		{"segment with its seed", []string{"--execution-segment", "1/3:2/3", "--seed", "7", script}, func(t *testing.T, a Args) {
			cfg := a.EngineConfig(&bytes.Buffer{})
			if a.Segment.Whole() || cfg.Overrides.Segment.String() != a.Segment.String() || cfg.Seed != 7 || a.SeedDrawn {
				t.Errorf("segment %v (engine %v), seed %d drawn %v: want the middle third, seed 7 given", a.Segment, cfg.Overrides.Segment, cfg.Seed, a.SeedDrawn)
			}
		}, ""},
		{"tags and env", []string{"--tag", "team=perf", "-e", "N=3", "--include-system-env-vars=false", script}, func(t *testing.T, a Args) {
			if a.Tags["team"] != "perf" || len(a.Env) != 1 || a.Env["N"] != "3" || !a.SeedDrawn {
				t.Errorf("tags %v, env %v, seed drawn %v: want team=perf, N=3 alone, a drawn seed", a.Tags, a.Env, a.SeedDrawn)
			}
		}, ""},
		{"stock scenario", []string{stock}, func(t *testing.T, a Args) {
			if a.Source == nil || a.EngineConfig(&bytes.Buffer{}).SourceFS == nil {
				t.Errorf("%s: no source or no files to import from", stock)
			}
		}, ""},
		{"no target sends nothing", []string{script}, func(t *testing.T, a Args) {
			if cfg := a.EngineConfig(&bytes.Buffer{}); cfg.LLM.BaseURL == "" {
				t.Error("inspect's engine has no target: want the placeholder")
			}
		}, ""},
		{"tag without value", []string{"--tag", "team", script}, nil, `--tag "team": expected KEY=VALUE`},
		{"sequence without segment", []string{"--execution-segment-sequence", "0,1/2,1", script}, nil, "--execution-segment-sequence needs --execution-segment"},
		{"bad stage", []string{"-s", "10", script}, nil, `invalid argument "10" for "-s, --stage"`},
		{"missing script", []string{filepath.Join(t.TempDir(), "none.js")}, nil, "cannot open script"},
		{"two scripts", []string{script, script}, nil, "expected one script, got 2 arguments"},
		{"bad slo", []string{"--slo", "ttft_p99=soon", script}, nil, "--slo:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, code, ok, stderr := parse(t, tt.args...)
			if tt.check == nil {
				if ok || code != exitcode.Usage || !strings.Contains(stderr, tt.wantErr) {
					t.Fatalf("ok %v, exit %d, stderr %q: want exit %d and %q", ok, code, stderr, exitcode.Usage, tt.wantErr)
				}
				return
			}
			if !ok {
				t.Fatalf("refused with exit %d: %s", code, stderr)
			}
			tt.check(t, a)
		})
	}
}
