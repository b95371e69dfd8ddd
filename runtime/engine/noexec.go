package engine

import (
	"fmt"
	"slices"
	"strings"
)

// lifecycleExports are the exported functions llmrun calls itself, which
// no scenario runs.
var lifecycleExports = []string{"setup", "teardown", "handleSummary"}

// noExec is the error of scenario sc, whose function the script does not
// export. The shorthand's scenario (-u/-d/-i/-s, options.vus/duration/…,
// or none at all) is the user's own only through the default function it
// runs: its error says which option runs that function and which the
// script exports instead, rather than naming a scenario the user never
// wrote.
func (e *Engine) noExec(sc *Scenario) error {
	if sc.shorthand == "" {
		return &ConfigError{Field: "options.scenarios." + sc.Name + ".exec", Err: fmt.Errorf("the script exports no function %q", sc.Exec)}
	}
	exported := "it exports no other function"
	names, err := e.vu0.inst.FunctionNames()
	names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(lifecycleExports, n) })
	if err == nil && len(names) > 0 {
		exported = "it exports " + strings.Join(names, ", ")
	}
	o := e.options
	field, runs, fix := "options", "without options.scenarios, a run calls the script's default function",
		"export a default function, or give options.scenarios whose exec names the function to run"
	switch {
	case sc.shorthand == "command line" && len(o.Scenarios) > 0:
		field, runs = "-u/-d/-i/-s", "they replace the script's options.scenarios with one scenario that runs its default function"
		fix = "run without them to use its scenarios, or export a default function"
	case sc.shorthand == "command line":
		field, runs = "-u/-d/-i/-s", "they run the script's default function"
	case o.VUs != nil || o.Duration != nil || o.Iterations != nil || len(o.Stages) > 0:
		field, runs = "options.vus/duration/iterations/stages", "they run the script's default function"
	}
	return &ConfigError{Field: field, Err: fmt.Errorf("%s, which it does not export (%s): %s", runs, exported, fix)}
}
