package metricsjs_test

import (
	"strings"
	"testing"
)

// TestJSMetricsHostileValues adds samples with tags and values that run
// script code that fails: tag values become descriptions, objects are
// never values, and nothing shows a Go value's dump.
func TestJSMetricsHostileValues(t *testing.T) {
	v := newJSVU(t, nil)
	v.Run(initMetrics)
	v.LeaveInit()
	v.Run(`c.add(1, { lib: Object.assign(Object.create(null), { message: 'lib error' }), n: { toString() { throw 1 } } })`)
	if st := v.Stats("my_counter", "lib", "lib error", "n", "[object whose toString threw: 1]"); st == nil || st.Count != 1 {
		t.Errorf("my_counter series = %v", v.Series("my_counter"))
	}
	for src, want := range map[string]string{
		`c.add({ get x() { throw new Error('getter') } })`:                   "TypeError: metrics: my_counter.add(): value must be a finite number or a boolean",
		`c.add(1, new Proxy({}, { ownKeys() { throw new Error('keys') } }))`: "TypeError: reading the tags: Error: keys",
		`c.add(1, 'not tags')`: "TypeError: tags must be an object of names and values, not a string",
	} {
		_, err := v.Runtime().RunString(src)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", src, err, want)
		}
	}
}
