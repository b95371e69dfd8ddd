package engine

import (
	"strings"
	"testing"
	"time"
)

// A script without a default export, run by the shorthand (-u/-d on the
// command line, options.vus/duration, or nothing), is told which option
// runs the default function and which functions it exports instead,
// without naming a scenario "default" it never wrote; a named scenario's
// exec is still named as it was written.
func TestNoDefaultExportSaysWhatRunsIt(t *testing.T) {
	vus, d := 2, 5*time.Second
	cmdline := Overrides{VUs: &vus, Duration: &d}
	const fns = `
export function chat() {}
export function rag() {}
export function setup() {}
`
	for _, tc := range []struct {
		name      string
		src       string
		overrides Overrides
		want      string
	}{
		{"-u -d", fns, cmdline,
			"invalid options: -u/-d/-i/-s: they run the script's default function, which it does not export (it exports chat, rag): export a default function, or give options.scenarios"},
		{"-u -d over the script's scenarios", `export const options = { scenarios: { c: { executor: 'constant-vus', vus: 1, duration: '1s', exec: 'chat' } } };` + fns, cmdline,
			"invalid options: -u/-d/-i/-s: they replace the script's options.scenarios with one scenario that runs its default function, which it does not export (it exports chat, rag): run without them to use its scenarios"},
		{"options.vus and duration", `export const options = { vus: 2, duration: '5s' };` + fns, Overrides{},
			"invalid options: options.vus/duration/iterations/stages: they run the script's default function, which it does not export (it exports chat, rag)"},
		{"no options", `export function setup() {}`, Overrides{},
			"invalid options: options: without options.scenarios, a run calls the script's default function, which it does not export (it exports no other function)"},
		{"a named scenario", `export const options = { scenarios: { c: { executor: 'constant-vus', vus: 1, duration: '1s', exec: 'chta' } } };` + fns, Overrides{},
			`invalid options: options.scenarios.c.exec: the script exports no function "chta"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, tc.src, nil, nil)
			cfg.Overrides = tc.overrides
			_, err := Load(t.Context(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want %q", err, tc.want)
			}
			if tc.name != "a named scenario" && strings.Contains(err.Error(), "scenarios.default") {
				t.Errorf("Load: %v names a scenario the script never wrote", err)
			}
		})
	}
}
