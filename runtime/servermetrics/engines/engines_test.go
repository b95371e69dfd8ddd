package engines

import (
	"bytes"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parse reads exposition text with the Prometheus project's own parser, as
// the scraper does.
func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return families
}

func parseFile(t *testing.T, name string) map[string]*dto.MetricFamily {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(text))
}

func figures(e *Engine) []Figure {
	var fs []Figure
	for _, d := range Definitions {
		if _, ok := e.Figures[d.Figure]; ok {
			fs = append(fs, d.Figure)
		}
	}
	return fs
}

// TestRecordedExpositions is the "reads every preset field" check: each
// engine's recorded exposition is detected as that engine, and every figure
// the engine's preset names is found in it with the type and the series it
// must have.
func TestRecordedExpositions(t *testing.T) {
	for _, tt := range []struct {
		file, engine string
		filter       map[string]string
	}{
		{"vllm.prom", "vllm", map[string]string{"model_name": "Qwen/Qwen3-8B"}},
		{"llm-d-inference-sim.prom", "llm-d-inference-sim", map[string]string{"model_name": "meta-llama/Llama-3.1-8B-Instruct"}},
		{"sglang.prom", "sglang", map[string]string{"model_name": "meta-llama/Llama-3.1-8B-Instruct"}},
		{"tgi.prom", "tgi", nil},
		{"triton.prom", "triton", nil},
		{"dcgm.prom", "dcgm", nil},
	} {
		t.Run(tt.engine, func(t *testing.T) {
			families := parseFile(t, tt.file)
			e := Detect(families)
			if e == nil || e.Name != tt.engine {
				t.Fatalf("Detect = %v, want %s", e, tt.engine)
			}
			for _, f := range figures(e) {
				sel, ok := e.Lookup(families, f, tt.filter)
				if !ok {
					t.Errorf("%s: not found (sources %v)", f, e.Figures[f])
					continue
				}
				checkSelection(t, sel)
			}
		})
	}
}

func checkSelection(t *testing.T, sel Selection) {
	t.Helper()
	if !typeFits(sel.Family.GetType(), sel.Source.Kind) || sel.Family.GetName() != sel.Source.Name {
		t.Errorf("%s: family %s of type %v for source %+v", sel.Figure, sel.Family.GetName(), sel.Family.GetType(), sel.Source)
	}
	if len(sel.Series) == 0 {
		t.Errorf("%s: no series", sel.Figure)
	}
	if sel.Source.Kind == Histogram && !sel.Source.HistogramSum {
		for _, m := range sel.Series {
			if len(m.GetHistogram().GetBucket()) == 0 {
				t.Errorf("%s: a series with no buckets", sel.Figure)
			}
		}
		if _, ok := sel.Value(); ok {
			t.Errorf("%s: a figure read from a histogram has a Value", sel.Figure)
		}
		return
	}
	if v, ok := sel.Value(); !ok || math.IsNaN(v) || v < 0 {
		t.Errorf("%s: Value = %v, %v", sel.Figure, v, ok)
	}
}

// TestValues reads figures whose values the recorded expositions fix, each
// in the figure's unit after the source's scale.
func TestValues(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		file   string
		figure Figure
		filter map[string]string
		want   float64
	}{
		{"vllm.prom", Running, nil, 7},
		{"vllm.prom", Waiting, nil, 2},
		{"vllm.prom", KVCacheUsage, nil, 0.4375},
		{"vllm.prom", Preemptions, nil, 3},
		{"vllm-v0.prom", KVCacheUsage, nil, 0.21875},
		{"vllm-v0.prom", Running, nil, 5},
		{"sglang.prom", KVCacheUsage, nil, 0.62},
		{"sglang.prom", PrefixCacheHitRate, nil, 0.4117},
		{"sglang.prom", Preemptions, nil, 2},
		{"tgi.prom", Running, nil, 9},
		{"tgi.prom", Waiting, nil, 3},
		{"tgi.prom", Requests, nil, 30},
		{"triton.prom", Running, nil, 6},
		{"triton.prom", Waiting, nil, 2},
		{"triton.prom", KVCacheUsage, nil, 0.4875},
		{"triton.prom", QueueTime, map[string]string{"model": "ensemble"}, 4107e-6},
		{"triton.prom", E2E, map[string]string{"model": "ensemble"}, 61.734815},
		{"triton.prom", GPUEnergy, nil, 184307.211},
		{"dcgm.prom", GPUPower, nil, 512.394 + 648.027},
		{"dcgm.prom", GPUEnergy, nil, (9142538911 + 9587120334) / 1e3},
		{"dcgm.prom", GPUUtilization, nil, (0.91 + 0.97) / 2},
		{"dcgm.prom", GPUUtilization, map[string]string{"gpu": "1"}, 0.97},
		{"dcgm.prom", GPUMemoryUsed, nil, (75970 + 75992) * mib},
		{"dcgm.prom", GPUMemoryFree, map[string]string{"UUID": "GPU-5d2b9f3a-8c41-4e0b-9a7e-1f2c3d4e5f60"}, 4812 * mib},
		{"dcgm.prom", GPUSMClock, map[string]string{"gpu": "0"}, 1980e6},
		{"dcgm.prom", GPUClockEventReasons, nil, 4},
		{"dcgm.prom", GPUTemperature, map[string]string{"gpu": "1"}, 63},
	} {
		families := parseFile(t, tt.file)
		e := Detect(families)
		sel, ok := e.Lookup(families, tt.figure, tt.filter)
		if !ok {
			t.Errorf("%s %s: not found", tt.file, tt.figure)
			continue
		}
		got, ok := sel.Value()
		if !ok || math.Abs(got-tt.want) > 1e-9*math.Max(1, math.Abs(tt.want)) {
			t.Errorf("%s %s%v = %v, %v; want %v", tt.file, tt.figure, tt.filter, got, ok, tt.want)
		}
	}
}

// TestCountersFromSums: a counter figure that the engine counts only in a
// histogram (TGI's tokens) reads the histogram's sample sum, and agrees with
// the sum of its own observations' counts.
func TestCountersFromSums(t *testing.T) {
	families := parseFile(t, "tgi.prom")
	e, _ := Preset("tgi")
	for _, f := range []Figure{PromptTokens, GenerationTokens} {
		sel, ok := e.Lookup(families, f, nil)
		if !ok {
			t.Fatalf("%s not found", f)
		}
		got, ok := sel.Value()
		want := sel.Series[0].GetHistogram().GetSampleSum()
		if !ok || got != want || got <= 0 {
			t.Errorf("%s = %v, %v; want the histogram's sum %v", f, got, ok, want)
		}
	}
}

// TestVLLMV0 reads an exposition of vLLM's V0 engine: the older names are
// read where the newer are missing, and the figures V0 did not have are not
// found.
func TestVLLMV0(t *testing.T) {
	families := parseFile(t, "vllm-v0.prom")
	e := Detect(families)
	if e == nil || e.Name != "vllm" {
		t.Fatalf("Detect = %v, want vllm", e)
	}
	var found []Figure
	for _, f := range figures(e) {
		sel, ok := e.Lookup(families, f, map[string]string{"model_name": "Qwen/Qwen3-8B"})
		if ok {
			checkSelection(t, sel)
			found = append(found, f)
		}
	}
	want := []Figure{Running, Waiting, KVCacheUsage, Preemptions, TTFT, ITL, E2E, PromptTokens, GenerationTokens, Requests}
	if !slices.Equal(found, want) {
		t.Errorf("found %v, want %v", found, want)
	}
	for f, name := range map[Figure]string{KVCacheUsage: "vllm:gpu_cache_usage_perc", ITL: "vllm:time_per_output_token_seconds"} {
		if sel, _ := e.Lookup(families, f, nil); sel.Source.Name != name {
			t.Errorf("%s read from %q, want %q", f, sel.Source.Name, name)
		}
	}
}

// TestAlternativesInOrder: where a target exposes both the newer and the
// older name, the newer is read.
func TestAlternativesInOrder(t *testing.T) {
	families := parseFile(t, "vllm.prom")
	e := Detect(families)
	for f, name := range map[Figure]string{
		KVCacheUsage:       "vllm:kv_cache_usage_perc",
		PrefixCacheQueries: "vllm:prefix_cache_queries_total",
		PrefixCacheHits:    "vllm:prefix_cache_hits_total",
		Preemptions:        "vllm:num_preemptions_total",
	} {
		if sel, _ := e.Lookup(families, f, nil); sel.Source.Name != name {
			t.Errorf("%s read from %q, want %q", f, sel.Source.Name, name)
		}
	}
}

func TestLookupRules(t *testing.T) {
	vllm, _ := Preset("vllm")
	for _, tt := range []struct {
		name, text string
		figure     Figure
		filter     map[string]string
		wantSource string // "" for not found
		wantValue  float64
	}{
		{
			name: "the filter picks the model's series",
			text: "# TYPE vllm:num_requests_running gauge\n" +
				"vllm:num_requests_running{engine=\"0\",model_name=\"a\"} 3\n" +
				"vllm:num_requests_running{engine=\"0\",model_name=\"b\"} 5\n",
			figure: Running, filter: map[string]string{"model_name": "b"},
			wantSource: "vllm:num_requests_running", wantValue: 5,
		},
		{
			name: "engines of one server add up",
			text: "# TYPE vllm:num_requests_running gauge\n" +
				"vllm:num_requests_running{engine=\"0\",model_name=\"a\"} 3\n" +
				"vllm:num_requests_running{engine=\"1\",model_name=\"a\"} 4\n",
			figure: Running, wantSource: "vllm:num_requests_running", wantValue: 7,
		},
		{
			name: "a fraction of several engines is their mean",
			text: "# TYPE vllm:kv_cache_usage_perc gauge\n" +
				"vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"a\"} 0.25\n" +
				"vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"a\"} 0.75\n",
			figure: KVCacheUsage, wantSource: "vllm:kv_cache_usage_perc", wantValue: 0.5,
		},
		{
			name: "a family whose series miss the filter yields to the next name",
			text: "# TYPE vllm:kv_cache_usage_perc gauge\n" +
				"vllm:kv_cache_usage_perc{model_name=\"a\"} 0.25\n" +
				"# TYPE vllm:gpu_cache_usage_perc gauge\n" +
				"vllm:gpu_cache_usage_perc{model_name=\"b\"} 0.75\n",
			figure: KVCacheUsage, filter: map[string]string{"model_name": "b"},
			wantSource: "vllm:gpu_cache_usage_perc", wantValue: 0.75,
		},
		{
			name: "no series of the filter's model",
			text: "# TYPE vllm:num_requests_running gauge\n" +
				"vllm:num_requests_running{model_name=\"a\"} 3\n",
			figure: Running, filter: map[string]string{"model_name": "z"},
		},
		{
			name: "a family of the wrong type is not the figure",
			text: "# TYPE vllm:num_requests_running counter\n" +
				"vllm:num_requests_running{model_name=\"a\"} 3\n",
			figure: Running,
		},
		{
			name:   "an untyped family is read as a gauge",
			text:   "vllm:num_requests_running{model_name=\"a\"} 3\n",
			figure: Running, wantSource: "vllm:num_requests_running", wantValue: 3,
		},
		{
			name: "a counter without the _total suffix",
			text: "# TYPE vllm:num_preemptions counter\n" +
				"vllm:num_preemptions{model_name=\"a\"} 2\n",
			figure: Preemptions, wantSource: "vllm:num_preemptions", wantValue: 2,
		},
		{
			name: "finish reasons add up to the requests",
			text: "# TYPE vllm:request_success_total counter\n" +
				"vllm:request_success_total{finished_reason=\"stop\",model_name=\"a\"} 9\n" +
				"vllm:request_success_total{finished_reason=\"length\",model_name=\"a\"} 2\n",
			figure: Requests, wantSource: "vllm:request_success_total", wantValue: 11,
		},
		{
			name:   "a figure the engine does not serve",
			text:   "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n",
			figure: GPUPower,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sel, ok := vllm.Lookup(parse(t, tt.text), tt.figure, tt.filter)
			if tt.wantSource == "" {
				if ok {
					t.Fatalf("found %s in %s, want nothing", tt.figure, sel.Source.Name)
				}
				if _, ok := sel.Value(); ok {
					t.Error("the zero Selection has a Value")
				}
				return
			}
			if !ok || sel.Source.Name != tt.wantSource {
				t.Fatalf("Lookup = %q, %v; want %q", sel.Source.Name, ok, tt.wantSource)
			}
			if got, ok := sel.Value(); !ok || got != tt.wantValue {
				t.Errorf("Value = %v, %v; want %v", got, ok, tt.wantValue)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for _, tt := range []struct {
		name, text, want string
	}{
		{"vLLM by any vllm: name", "# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size=\"16\"} 1\n", "vllm"},
		{"llm-d's simulator by its own histogram name", "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n" +
			"# TYPE vllm:max_num_generation_tokens histogram\nvllm:max_num_generation_tokens_bucket{le=\"+Inf\"} 0\nvllm:max_num_generation_tokens_sum 0\nvllm:max_num_generation_tokens_count 0\n", "llm-d-inference-sim"},
		{"Triton without TensorRT-LLM", "# TYPE nv_inference_request_success counter\nnv_inference_request_success{model=\"m\",version=\"1\"} 0\n", "triton"},
		{"a name that merely contains an engine's", "# TYPE my_vllm:thing gauge\nmy_vllm:thing 1\n", ""},
		{"nothing", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if e := Detect(parse(t, tt.text)); e != nil {
				got = e.Name
			}
			if got != tt.want {
				t.Errorf("Detect = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDetectGoProcess: a Go program's default metrics (the Go runtime and
// the process, as client_golang's collectors write them) are no engine's.
func TestDetectGoProcess(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	for _, mf := range gathered {
		if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
			t.Fatal(err)
		}
	}
	families := parse(t, text.String())
	if _, ok := families["go_goroutines"]; !ok {
		t.Fatalf("the exposition lacks go_goroutines:\n%s", text.String())
	}
	e := Detect(families)
	if e != nil {
		t.Errorf("Detect = %s, want none", e.Name)
	}
	if sel, ok := e.Lookup(families, Running, nil); ok {
		t.Errorf("no engine found %s in %s", Running, sel.Source.Name)
	}
}

func TestPreset(t *testing.T) {
	for _, tt := range []struct {
		name, want, wantErr string
	}{
		{"vllm", "vllm", ""},
		{" VLLM ", "vllm", ""},
		{"llm-d", "llm-d-inference-sim", ""},
		{"trtllm", "triton", ""},
		{"dcgm-exporter", "dcgm", ""},
		{"vlm", "", `unknown server-metrics preset "vlm": did you mean "vllm"? (known: llm-d-inference-sim, vllm, sglang, tgi, triton, dcgm)`},
		{"sglnag", "", `did you mean "sglang"?`},
		{"ollama", "", `unknown server-metrics preset "ollama" (known: llm-d-inference-sim, vllm, sglang, tgi, triton, dcgm)`},
		{"", "", `unknown server-metrics preset ""`},
	} {
		e, err := Preset(tt.name)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Preset(%q) error = %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || e.Name != tt.want {
			t.Errorf("Preset(%q) = %v, %v; want %s", tt.name, e, err, tt.want)
		}
	}
}

// TestTable checks the table against the definitions: every source of a
// figure can hold it, and every figure is defined.
func TestTable(t *testing.T) {
	for _, e := range Engines {
		for f, sources := range e.Figures {
			def, ok := Define(f)
			if !ok {
				t.Errorf("%s: figure %q is not defined", e.Name, f)
				continue
			}
			if len(sources) == 0 {
				t.Errorf("%s %s: no source", e.Name, f)
			}
			for _, s := range sources {
				fits := s.Kind == def.Kind ||
					(def.Kind == Counter && s.Kind == Histogram && s.HistogramSum) ||
					(def.Kind == Histogram && s.Kind == Counter) // Triton's cumulative latencies
				if !fits || s.Scale <= 0 || s.Name == "" {
					t.Errorf("%s %s: source %+v cannot hold a %s in %s", e.Name, f, s, def.Kind, def.Unit)
				}
			}
		}
	}
}

// TestProvenance: every recorded exposition opens with a comment that says
// whether it was captured or composed, and from which commit of which
// source.
func TestProvenance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.prom"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded expositions: %v", err)
	}
	commit := regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var header strings.Builder
		for _, line := range strings.Split(string(text), "\n") {
			if !strings.HasPrefix(line, "#") || strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
				break
			}
			header.WriteString(line + "\n")
		}
		h := header.String()
		if !commit.MatchString(h) || !(strings.Contains(h, "captured") || strings.Contains(h, "composed")) {
			t.Errorf("%s: its opening comment names no source commit, or not whether it was captured or composed:\n%s", file, h)
		}
	}
}

// TestFilter: the filter that selects a figure's series carries the
// source's own labels, which a caller's label of the same name does not
// change.
func TestFilter(t *testing.T) {
	families := parseFile(t, "triton.prom")
	e, _ := Preset("triton")
	sel, ok := e.Lookup(families, Running, map[string]string{"model": "tensorrt_llm", "request_type": "max"})
	if !ok {
		t.Fatal("running not found")
	}
	want := map[string]string{"model": "tensorrt_llm", "request_type": "active"}
	if got := sel.Source.Filter(map[string]string{"model": "tensorrt_llm", "request_type": "max"}); !maps.Equal(got, want) {
		t.Errorf("Filter = %v, want %v", got, want)
	}
	if v, _ := sel.Value(); v != 6 {
		t.Errorf("running = %v, want the active requests, 6", v)
	}
	if got := gauge("x").Filter(nil); len(got) != 0 {
		t.Errorf("Filter of nothing = %v", got)
	}
}
