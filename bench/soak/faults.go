package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// defaultFaults is the simulator's fault mix: about 15 % of requests meet
// one, of every class the client must survive. Stalls last forever, so
// that only the client's request timeout ends them.
var defaultFaults = []string{
	"http_5xx:0.02:status=503",
	"http_429:0.02",
	"refuse:0.01",
	"wrong_content_type:0.01",
	"slow_headers:0.01:duration=1s",
	"reset:0.02:after=5",
	"early_close:0.01:after=3",
	"malformed:0.02:after=4",
	"error_event:0.01:after=2",
	"big_line:0.005:after=2",
	"stall:0.005:after=3,duration=forever",
}

// faultClass is the error class llmrun gives a request that met each
// fault; "" is a success (the client copes). cmd/llmrun's
// TestEverySimulatorFaultIsClassified pins the same mapping.
var faultClass = map[string]string{
	"refuse":             "cut",
	"reset":              "cut",
	"early_close":        "cut",
	"http_429":           "http_429",
	"http_5xx":           "http_5xx",
	"error_event":        "stream_error",
	"malformed":          "decode",
	"wrong_content_type": "decode",
	"stall":              "timeout",
	"slow_headers":       "",
	"big_line":           "",
}

// beforeEngine are the faults the simulator answers without queueing the
// request in its engine, so that its Received count leaves them out.
var beforeEngine = []string{"refuse", "http_429", "http_5xx", "wrong_content_type"}

// faultList is the repeatable -fault flag; the first use replaces the
// default mix.
type faultList struct {
	specs []string
	set   bool
}

func (f *faultList) String() string { return strings.Join(f.specs, " ") }

// Set adds one simulator fault rule, NAME:RATE[:PARAM=VALUE,...], after
// checking that the harness knows which error class it gives.
func (f *faultList) Set(spec string) error {
	if err := checkFault(spec); err != nil {
		return err
	}
	if !f.set {
		f.specs, f.set = nil, true
	}
	f.specs = append(f.specs, spec)
	return nil
}

// checkFault reports a fault rule whose outcome the harness cannot
// predict: an unknown fault, or a stall that the request timeout would not
// end.
func checkFault(spec string) error {
	name, _, _ := strings.Cut(spec, ":")
	if _, ok := faultClass[name]; !ok {
		return fmt.Errorf("fault %q: the harness knows no error class for %q (known: %s)", spec, name, knownFaults())
	}
	if name == "stall" && !strings.Contains(spec, "duration=forever") {
		return fmt.Errorf("fault %q: a stall must last duration=forever, so that it ends as a timeout", spec)
	}
	return nil
}

// knownFaults lists faultClass's names, sorted.
func knownFaults() string {
	return strings.Join(slices.Sorted(maps.Keys(faultClass)), ", ")
}

// simFaultArgs returns the simulator's --fault flags for specs.
func simFaultArgs(specs []string) []string {
	var args []string
	for _, s := range specs {
		args = append(args, "--fault", s)
	}
	return args
}
