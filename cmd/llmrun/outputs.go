package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/summary"
)

// outputKinds are the kinds --out knows, with how each is made from the
// text after "NAME=".
var outputKinds = map[string]func(value string, getenv func(string) string) (output.Output, error){
	"influxdb": func(value string, getenv func(string) string) (output.Output, error) {
		cfg, err := influxdb.ParseConfig(value, getenv)
		if err != nil {
			return nil, err
		}
		return influxdb.New(cfg), nil
	},
}

// outputSet is the run's outputs; it passes each request record to all.
type outputSet []output.Output

var _ modules.RequestSink = outputSet(nil)

// newOutputs makes the outputs of the --out NAME=VALUE flags.
func newOutputs(specs []string, getenv func(string) string) (outputSet, error) {
	var out outputSet
	for _, spec := range specs {
		name, value, ok := strings.Cut(spec, "=")
		newOutput, known := outputKinds[name]
		if !ok || !known {
			return nil, fmt.Errorf("--out %q: want NAME=VALUE with NAME one of %s", spec, strings.Join(slices.Sorted(maps.Keys(outputKinds)), ", "))
		}
		o, err := newOutput(value, getenv)
		if err != nil {
			return nil, fmt.Errorf("--out %s: %w", name, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// AddRequest implements modules.RequestSink.
func (s outputSet) AddRequest(r *modules.RequestRecord) {
	for _, o := range s {
		o.AddRequest(r)
	}
}

// start starts every output; the first failure stops the run before it
// begins.
func (s outputSet) start(ctx context.Context, run output.Run) error {
	for _, o := range s {
		if err := o.Start(ctx, run); err != nil {
			return fmt.Errorf("%s: %w", o.Describe(), err)
		}
	}
	return nil
}

// finish hands every output the summary and collects their reports. Each
// flushes within its own timeout, also after Ctrl-C.
func (s outputSet) finish(sum *summary.Summary) []summary.OutputReport {
	reports := make([]summary.OutputReport, len(s))
	for i, o := range s {
		reports[i] = o.Finish(context.Background(), sum)
	}
	return reports
}

// newRunID returns a random identifier for a run.
func newRunID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// defaultTestID is the test ID of a script run without --testid: its file
// name without extension (a stock scenario's name).
func defaultTestID(script string) string {
	base := filepath.Base(strings.TrimPrefix(script, "stock:"))
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// parseTags reads the --tag KEY=VALUE flags.
func parseTags(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	tags := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--tag %q: expected KEY=VALUE", kv)
		}
		tags[k] = v
	}
	return tags, nil
}
