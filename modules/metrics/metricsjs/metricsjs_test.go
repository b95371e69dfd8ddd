package metricsjs_test

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/metrics/metricsjs"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// newJSVU returns a VU in its init context sharing reg (a fresh registry
// when nil), with the module's exports as the global "metrics".
func newJSVU(t *testing.T, reg *metrics.Registry) *modulestest.VU {
	t.Helper()
	v := modulestest.NewVU(t)
	if reg != nil {
		v.UseRegistry(reg)
	}
	v.Expose("metrics", metricsjs.Module{})
	return v
}

const initMetrics = `
const { Counter, Gauge, Rate, Trend } = metrics;
const c = new Counter('my_counter');
const g = new Gauge('my_gauge');
const r = new Rate('my_rate');
const t = new Trend('my_trend');
const tt = new Trend('my_time', true);
`

func TestJSMetricsRecordValuesAndTags(t *testing.T) {
	v := newJSVU(t, nil)
	v.Run(initMetrics)
	if got := v.Run(`[c.name, g.name, r.name, t.name, tt.name].join(',')`).String(); got != "my_counter,my_gauge,my_rate,my_trend,my_time" {
		t.Errorf("names = %q", got)
	}
	defs := []struct {
		name     string
		typ      metrics.Type
		contains metrics.ValueType
	}{
		{"my_counter", metrics.Counter, metrics.Default},
		{"my_gauge", metrics.Gauge, metrics.Default},
		{"my_rate", metrics.Rate, metrics.Default},
		{"my_trend", metrics.Trend, metrics.Default},
		{"my_time", metrics.Trend, metrics.Time},
	}
	for _, d := range defs {
		m := v.Registry().Get(d.name)
		if m == nil || m.Type != d.typ || m.Contains != d.contains || !m.Custom {
			t.Errorf("registry has %s = %+v, want a custom %s of %s values", d.name, m, d.typ, d.contains)
		}
	}

	v.LeaveInit()
	if ok := v.Run(`c.add(2, { k: 'v' })`); !ok.ToBoolean() {
		t.Errorf("add returned %v, want true", ok)
	}
	v.Run(`
c.add(3); c.add(true);
g.add(5); g.add(-2); g.add(7, { k: 'v' });
r.add(true); r.add(false); r.add(0); r.add(3);
t.add(1.5); t.add(2.5, { k: 'v', n: 1 });
tt.add(120);
`)
	tests := []struct {
		name                string
		filter              []string
		count, nonZero      int64
		sum, min, max, last float64
	}{
		{"my_counter", nil, 3, 3, 6, 1, 3, 1},
		{"my_counter", []string{"k", "v", "scenario", "test"}, 1, 1, 2, 2, 2, 2},
		{"my_gauge", nil, 3, 3, 10, -2, 7, 7},
		{"my_rate", nil, 4, 2, 4, 0, 3, 3},
		{"my_trend", []string{"scenario", "test"}, 2, 2, 4, 1.5, 2.5, 2.5},
		{"my_trend", []string{"k", "v", "n", "1"}, 1, 1, 2.5, 2.5, 2.5, 2.5},
		{"my_time", nil, 1, 1, 120, 120, 120, 120},
	}
	for _, tc := range tests {
		st := v.Stats(tc.name, tc.filter...)
		if st == nil {
			t.Errorf("%s%v: no samples", tc.name, tc.filter)
			continue
		}
		if st.Count != tc.count || st.NonZero != tc.nonZero || st.Sum != tc.sum || st.Min != tc.min || st.Max != tc.max {
			t.Errorf("%s%v = count %d nonzero %d sum %v min %v max %v; want %d %d %v %v %v",
				tc.name, tc.filter, st.Count, st.NonZero, st.Sum, st.Min, st.Max, tc.count, tc.nonZero, tc.sum, tc.min, tc.max)
		}
	}
	if st := v.Stats("my_gauge"); st.Last != 7 {
		t.Errorf("my_gauge last = %v, want 7", st.Last)
	}
	if p := v.Stats("my_trend").Percentile(50); p != 1.5 {
		t.Errorf("my_trend p50 = %v, want 1.5", p)
	}
	for _, se := range v.Aggregator.Snapshot().Series() {
		if got, _ := se.Tags.Get("scenario"); got != "test" {
			t.Errorf("series %s{%s} lacks the VU's tags", se.Metric.Name, se.Tags.Key())
		}
	}
}

func TestJSMetricsRejectValuesThatAreNotNumbers(t *testing.T) {
	for _, arg := range []string{"NaN", "Infinity", "-Infinity", "'3'", "undefined", "null", "", "{}", "[1]", "10n"} {
		t.Run(arg, func(t *testing.T) {
			v := newJSVU(t, nil)
			v.Run(initMetrics)
			v.LeaveInit()
			_, err := v.Runtime().RunString(`c.add(` + arg + `)`)
			want := "TypeError: metrics: my_counter.add(): value must be a finite number or a boolean"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("c.add(%s): error %v, want %q", arg, err, want)
			}
			if n := len(v.Aggregator.Snapshot().Series()); n != 0 {
				t.Errorf("a rejected value made %d series", n)
			}
		})
	}
}

func TestJSMetricsInitContextRules(t *testing.T) {
	t.Run("creating a metric after init", func(t *testing.T) {
		v := newJSVU(t, nil)
		v.LeaveInit()
		for _, typ := range []string{"Counter", "Gauge", "Rate", "Trend"} {
			_, err := v.Runtime().RunString(`new metrics.` + typ + `('late')`)
			want := "TypeError: metrics: new " + typ + "() is only allowed in the init context"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("new %s() after init: error %v, want %q", typ, err, want)
			}
		}
		if m := v.Registry().Get("late"); m != nil {
			t.Errorf("the refused metric was registered: %+v", m)
		}
	})
	t.Run("add in init", func(t *testing.T) {
		v := newJSVU(t, nil)
		_, err := v.Runtime().RunString(initMetrics + `c.add(1)`)
		want := "TypeError: metrics: my_counter.add() cannot be called in the init context"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("add in init: error %v, want %q", err, want)
		}
	})
}

func TestJSMetricsRegistration(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"same name, another type", `new metrics.Counter('dup'); new metrics.Trend('dup')`,
			`metrics: metric "dup" is already registered as a counter of default values, cannot register it as a trend`},
		{"a built-in name with another type", `new metrics.Trend('taken')`,
			`metric "taken" is already registered as a rate of default values, cannot register it as a trend`},
		{"invalid name", `new metrics.Counter('no spaces')`, `invalid metric name "no spaces"`},
		{"empty name", `new metrics.Gauge('')`, `invalid metric name ""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := metrics.NewRegistry()
			reg.MustRegister(metrics.Metric{Name: "taken", Type: metrics.Rate})
			v := newJSVU(t, reg)
			_, err := v.Runtime().RunString(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A script that names a built-in metric with its type feeds the built-in
// one, which stays built-in.
func TestJSMetricsBuiltinNameStaysBuiltin(t *testing.T) {
	reg := metrics.NewRegistry()
	builtin := reg.MustRegister(metrics.Metric{Name: "taken", Type: metrics.Rate})
	v := newJSVU(t, reg)
	v.Run(`const taken = new metrics.Rate('taken')`)
	v.LeaveInit()
	v.Run(`taken.add(true)`)
	if m := reg.Get("taken"); m != builtin || m.Custom {
		t.Errorf("registry has taken = %+v, want the built-in definition %+v", m, builtin)
	}
	if st := v.Stats("taken"); st == nil || st.Count != 1 {
		t.Errorf("the built-in metric got %v, want the script's sample", st)
	}
}

// Every VU runs the init code: the same metric created in each is one
// metric.
func TestJSMetricsSharedBetweenVUs(t *testing.T) {
	reg := metrics.NewRegistry()
	a, b := newJSVU(t, reg), newJSVU(t, reg)
	a.Run(initMetrics)
	b.Run(initMetrics)
	if n := len(reg.All()); n != 5 {
		t.Errorf("registry holds %d metrics after two VUs' init, want 5", n)
	}
	a.LeaveInit()
	b.LeaveInit()
	a.Run(`c.add(1)`)
	b.Run(`c.add(2)`)
	sa, sb := a.Aggregator.Snapshot().Series(), b.Aggregator.Snapshot().Series()
	if len(sa) != 1 || len(sb) != 1 || sa[0].Metric != sb[0].Metric || sa[0].Metric != reg.Get("my_counter") {
		t.Errorf("the VUs' samples point at different definitions: %v, %v", sa, sb)
	}
}

// TestAddKeepsItsShape pins what scripts see of add, whose Go binding
// takes a goja.FunctionCall for speed: a function of length 2, add(value,
// tags), whose tags are read before its sample is taken, so that a tag
// getter that adds too leaves both samples.
func TestAddKeepsItsShape(t *testing.T) {
	v := newJSVU(t, nil)
	v.Run(initMetrics)
	v.LeaveInit()
	if n := v.Run(`c.add.length`).ToInteger(); n != 2 {
		t.Errorf("add.length = %d, want 2", n)
	}
	v.Run(`c.add(1, { get k() { c.add(10); return 'v'; } })`)
	if st := v.Stats("my_counter", "k", "v"); st == nil || st.Count != 1 || st.Sum != 1 {
		t.Errorf("the sample tagged by the getter: %+v, want one of 1", st)
	}
	if st := v.Stats("my_counter"); st == nil || st.Count != 2 || st.Sum != 11 {
		t.Errorf("all samples: %+v, want two, summing 11", st)
	}
}
