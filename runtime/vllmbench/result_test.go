package vllmbench

import (
	"math"
	"strings"
	"testing"
	"time"
)

// exact computes what numpy computes: mean, median, population std and
// percentiles interpolated linearly between closest ranks.
func TestExactIsNumpys(t *testing.T) {
	t.Parallel()
	d := exact([]float64{4, 1, 3, 2})
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	// np.mean, np.median, np.std, np.percentile(…, 99), np.percentile(…, 25)
	if !near(d.mean, 2.5) || !near(d.median, 2.5) || !near(d.std, 1.118033988749895) ||
		!near(d.percentile(99), 3.97) || !near(d.percentile(25), 1.75) || !near(d.percentile(100), 4) {
		t.Errorf("mean %v, median %v, std %v, p99 %v, p25 %v, p100 %v; want numpy's 2.5, 2.5, 1.1180…, 3.97, 1.75, 4",
			d.mean, d.median, d.std, d.percentile(99), d.percentile(25), d.percentile(100))
	}
	if none := exact(nil); none.mean != 0 || none.percentile(99) != 0 {
		t.Errorf("no values: %+v, want zeros as vLLM's np.mean(values or 0)", none)
	}
}

// The result file's name and the block's rules are vLLM's.
func TestNamesAndLayout(t *testing.T) {
	t.Parallel()
	date := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	o := Defaults()
	for _, tc := range []struct {
		edit func(*Options)
		dir  string
		name string
		want string
	}{
		{func(o *Options) {}, "", "", "openai-infqps-Llama-3.1-8B-20250304-050607.json"},
		{func(o *Options) { o.RequestRate, o.MaxConcurrency, o.Label = 20, 8, "run1" }, "out", "", "out/run1-20.0qps-concurrency8-Llama-3.1-8B-20250304-050607.json"},
		{func(o *Options) { o.RequestRate = 0.5 }, "", "", "openai-0.5qps-Llama-3.1-8B-20250304-050607.json"},
		{func(o *Options) {}, "d", "mine.json", "d/mine.json"},
	} {
		o := o
		tc.edit(&o)
		if got := FileName(o, "meta-llama/Llama-3.1-8B", date, tc.dir, tc.name); got != tc.want {
			t.Errorf("FileName = %s, want %s", got, tc.want)
		}
	}
	for s, want := range map[string]string{
		" Serving Benchmark Result ": "============ Serving Benchmark Result ============",
		"Time to First Token":        "---------------Time to First Token----------------",
	} {
		fill := '='
		if !strings.HasPrefix(want, "=") {
			fill = '-'
		}
		if got := center(s, fill); got != want {
			t.Errorf("center(%q) = %q, want %q", s, got, want)
		}
	}
}

// The API follows the backend and the endpoint; the base URL is the
// server's, with or without its /v1 (which the client adds when missing,
// as for llmrun run), followed by what the endpoint has before its /v1.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	o := Defaults()
	for server, want := range map[string]string{
		"http://h:8000/": "http://h:8000", "http://h:8000/v1": "http://h:8000/v1", "http://h:8000/v1/": "http://h:8000/v1",
	} {
		if got := o.BaseURL(server); got != want {
			t.Errorf("default endpoint on %s: base URL %s, want %s", server, got, want)
		}
	}
	if o.api() != "completions" {
		t.Errorf("default: api %s", o.api())
	}
	o.Backend, o.Endpoint = "openai-chat", "/v1/chat/completions"
	if o.api() != "chat" || o.BaseURL("http://h:8000") != "http://h:8000" {
		t.Errorf("chat: api %s, base URL %s", o.api(), o.BaseURL("http://h:8000"))
	}
	o.Endpoint = "/openai/v1/completions"
	if got := o.BaseURL("http://h:8000"); got != "http://h:8000/openai" {
		t.Errorf("endpoint %s: base URL %s, want http://h:8000/openai", o.Endpoint, got)
	}
}

// The random dataset's lengths are vLLM's: floor(n·(1−r)) to
// ceil(n·(1+r)), at least 1.
func TestRandomRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n         int
		r         float64
		low, high int
	}{{128, 0, 128, 128}, {128, 0.5, 64, 192}, {10, 0.25, 7, 13}, {1, 0.9, 1, 2}} {
		o := Defaults()
		o.RandomRangeRatio = tc.r
		if low, high := o.randomRange(tc.n); low != tc.low || high != tc.high {
			t.Errorf("randomRange(%d) at r %v = %d…%d, want %d…%d", tc.n, tc.r, low, high, tc.low, tc.high)
		}
	}
}

// Floats are written as Python's json.dump writes them, integers as
// integers: a reader of vLLM's files finds the same numbers, 20.0 where
// vLLM writes 20.0.
func TestPythonNumbers(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{
		20: "20.0", 0: "0.0", 0.5: "0.5", 1e-4: "0.0001", 1e-5: "1e-05", 1.5e16: "1.5e+16", 123456.789: "123456.789",
		-2: "-2.0", math.Inf(1): "Infinity", math.NaN(): "NaN",
	} {
		if got := pythonFloat(v); got != want {
			t.Errorf("pythonFloat(%v) = %s, want %s", v, got, want)
		}
	}
	if got := pyFloat(math.Inf(1)); got != "inf" {
		t.Errorf("pyFloat(+Inf) = %s, want inf (Python's str)", got)
	}
	r := &Result{values: map[string]any{}}
	r.set("num_prompts", 3)
	r.set("request_rate", 20.0)
	r.set("itls", [][]float64{{0.25, 1}, {}})
	r.set("label", nil)
	b, err := r.MarshalJSON()
	if want := `{"num_prompts": 3, "request_rate": 20.0, "itls": [[0.25, 1.0], []], "label": null}`; err != nil || string(b) != want {
		t.Errorf("MarshalJSON: %s, %v; want %s", b, err, want)
	}
}
