package engine

import (
	"strings"
	"testing"
)

// TestModuleExportShapes pins what a script sees of each module's exports
// in a VU: every property's name, kind, function name and length and
// flags (in sorted order: the order of a module's properties was once
// random). A function's name is Go's name for it.
func TestModuleExportShapes(t *testing.T) {
	e := load(t, testConfig(t, `
import llm from 'llm';
import * as ns from 'llm';
function shape(o) {
  return Object.getOwnPropertyNames(o).sort().map((k) => {
    const d = Object.getOwnPropertyDescriptor(o, k);
    const v = d.value;
    const kind = typeof v === 'function' ? 'function ' + JSON.stringify(v.name) + ' ' + v.length : typeof v;
    return k + ':' + kind + ' ' + (d.writable ? 'w' : '-') + (d.enumerable ? 'e' : '-') + (d.configurable ? 'c' : '-');
  }).join(', ');
}
const data = require('data');
export const shapes = [
  shape(llm), shape(require('llmrun')), shape(require('metrics')), shape(require('llmrun/config')),
  shape(data), shape(data.prompts), shape(data.lengths), Object.keys(ns).sort().join(','),
].join('\n');
export default function () {}
`, nil, nil))
	v, err := e.vu0.inst.Export("shapes")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`client:function "github.com/llmrun/llmrun/modules/llm/llmjs.(*instance).newClient-fm" 1 wec, conversation:function "github.com/llmrun/llmrun/modules/llm/llmjs.(*instance).newConversation-fm" 1 wec, sessions:function "github.com/llmrun/llmrun/modules/llm/llmjs.(*instance).newSessions-fm" 1 wec, stream:function "github.com/llmrun/llmrun/modules/llm/llmjs.(*Module).NewInstance.func1.streamFunction.2" 2 wec`,
		`check:function "github.com/llmrun/llmrun/modules/checks.(*instance).check-fm" 3 wec, group:function "github.com/llmrun/llmrun/modules/checks.(*instance).group-fm" 2 wec, sleep:function "github.com/llmrun/llmrun/modules/checks.(*instance).sleep-fm" 1 wec, textSummary:function "github.com/llmrun/llmrun/modules/checks.(*instance).renderSummary-fm" 2 wec`,
		`Counter:function "github.com/llmrun/llmrun/modules/metrics/metricsjs.constructor.func1" 0 wec, Gauge:function "github.com/llmrun/llmrun/modules/metrics/metricsjs.constructor.func1" 0 wec, Rate:function "github.com/llmrun/llmrun/modules/metrics/metricsjs.constructor.func1" 0 wec, Trend:function "github.com/llmrun/llmrun/modules/metrics/metricsjs.constructor.func1" 0 wec`,
		`load:function "github.com/llmrun/llmrun/modules/settings.Module.NewInstance.func1" 1 wec, parse:function "github.com/llmrun/llmrun/modules/settings.Module.NewInstance.func2" 2 wec, seconds:function "github.com/llmrun/llmrun/modules/settings.Module.NewInstance.func4" 1 wec, settings:function "github.com/llmrun/llmrun/modules/settings.Module.NewInstance.func3" 1 wec`,
		`dataset:function "github.com/llmrun/llmrun/modules/data.(*instance).dataset-fm" 2 wec, images:object wec, lengths:object wec, prompts:object wec, tokenizer:function "github.com/llmrun/llmrun/modules/data.(*instance).tokenizerObject-fm" 1 wec`,
		`fromHashIds:function "github.com/llmrun/llmrun/modules/data.(*instance).fromHashIDs-fm" 2 wec, sharedPrefix:function "github.com/llmrun/llmrun/modules/data.(*instance).sharedPrefix-fm" 1 wec, synthetic:function "github.com/llmrun/llmrun/modules/data.(*instance).synthetic-fm" 2 wec`,
		`empirical:function "github.com/llmrun/llmrun/modules/data.(*instance).empirical-fm" 2 wec, fixed:function "github.com/llmrun/llmrun/modules/data.(*instance).fixed-fm" 1 wec, lognormal:function "github.com/llmrun/llmrun/modules/data.(*instance).lognormal-fm" 1 wec, normal:function "github.com/llmrun/llmrun/modules/data.(*instance).normal-fm" 1 wec, uniform:function "github.com/llmrun/llmrun/modules/data.(*instance).uniform-fm" 1 wec`,
		`client,conversation,default,sessions,stream`,
	}, "\n")
	if got := v.String(); got != want {
		t.Errorf("shapes:\n%s\nwant:\n%s", got, want)
	}
}
