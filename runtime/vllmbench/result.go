package vllmbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/internal/tokenizer"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Run is what a benchmark run came to, for NewResult.
type Run struct {
	Summary   *summary.Summary
	Requests  []Request // in the order they started (Collector.Requests)
	ModelID   string
	Date      time.Time
	Tokenizer string // the tokenizer's id (--tokenizer); "" is llmrun's default, cl100k_base
	// Texts holds the requests' texts when the Collector spilled them
	// (Collector.SpillTexts); nil when they are in Requests.
	Texts *TextSpill
}

// Result is vLLM's result of a benchmark: its keys and values in the
// order vLLM writes them.
type Result struct {
	keys   []string
	values map[string]any
	o      Options
	// failed is the failed requests, which vLLM prints but does not
	// save of a pooling benchmark.
	failed int
}

func (r *Result) set(key string, v any) {
	if _, ok := r.values[key]; !ok {
		r.keys = append(r.keys, key)
	}
	r.values[key] = v
}

// Get returns the value of key, and whether the result has it.
func (r *Result) Get(key string) (any, bool) { v, ok := r.values[key]; return v, ok }

// Keys returns the result's keys, in order.
func (r *Result) Keys() []string { return slices.Clone(r.keys) }

// MarshalJSON is the result as WriteJSON writes it.
func (r *Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteJSON writes the result to w as vLLM's JSON object, as Python's
// json.dump writes it: keys in vLLM's order, ", " and ": " between them,
// and floats as Python writes them (20.0, 0.0, 1e-05), integers without a
// point. Spilled texts (Run.Texts) are copied from their file as they
// are written: the document is never whole in memory.
func (r *Result) WriteJSON(w io.Writer) error {
	b := bufio.NewWriter(w)
	b.WriteByte('{')
	for i, k := range r.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteString(": ")
		if err := writePython(b, r.values[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	b.WriteByte('}')
	return b.Flush()
}

// writePython writes v as Python's json.dump writes the value vLLM has
// there: a float64 (also in lists, and lists of lists) as pythonFloat,
// spilled texts as the list of their JSON strings, anything else as
// encoding/json. A write error stays in b, which its Flush returns.
func writePython(b *bufio.Writer, v any) error {
	list := func(n int, item func(int) error) error {
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := item(i); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	switch v := v.(type) {
	case float64:
		b.WriteString(pythonFloat(v))
		return nil
	case []float64:
		return list(len(v), func(i int) error { return writePython(b, v[i]) })
	case [][]float64:
		return list(len(v), func(i int) error { return writePython(b, v[i]) })
	case spilledTexts:
		if v.refs == nil {
			b.WriteString("null") // as encoding/json writes a nil list
			return nil
		}
		// encoding/json's list: no space after its commas.
		b.WriteByte('[')
		for i, ref := range v.refs {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := v.spill.copyTo(b, ref); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	j, err := json.Marshal(v)
	b.Write(j)
	return err
}

// pythonFloat writes v as Python's float repr (which json.dump uses): the
// shortest digits that read back as v, with a point ("20.0"), in
// exponent form below 1e-4 and from 1e16 ("1e-05", "1.5e+16"); NaN and
// the infinities as json.dump writes them (NaN, Infinity, -Infinity),
// which Python's json.load reads back.
func pythonFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	if v != 0 && (math.Abs(v) < 1e-4 || math.Abs(v) >= 1e16) {
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// NewResult computes vLLM's result of a run, as `vllm bench serve`
// computes it (vllm/benchmarks/serve.py, calculate_metrics and
// main_async): its setup keys, --metadata, then the figures over the
// completed requests; with o.SaveDetailed, the per-request lists. Statistics
// are numpy's over the requests: mean, median, population std and
// linearly interpolated percentiles.
func NewResult(o Options, run Run) *Result {
	detailed := o.SaveDetailed
	r := &Result{values: map[string]any{}, o: o}
	var label any
	if o.Label != "" {
		label = o.Label
	}
	tokenizerID := run.Tokenizer
	if tokenizerID == "" {
		tokenizerID = tokenizer.DefaultEncoding
	}
	endpointType := o.Backend
	if o.EndpointType != "" {
		endpointType = o.EndpointType
	}
	r.set("date", run.Date.Format("20060102-150405"))
	r.set("endpoint_type", endpointType)
	r.set("backend", o.Backend)
	r.set("label", label)
	r.set("model_id", run.ModelID)
	r.set("tokenizer_id", tokenizerID)
	r.set("num_prompts", o.NumPrompts)
	for _, kv := range o.Metadata {
		r.set(kv[0], kv[1])
	}
	if math.IsInf(o.RequestRate, 1) {
		r.set("request_rate", "inf")
	} else {
		r.set("request_rate", o.RequestRate)
	}
	r.set("burstiness", o.Burstiness)
	var maxConc any
	if o.MaxConcurrency > 0 {
		maxConc = o.MaxConcurrency
	}
	r.set("max_concurrency", maxConc)

	f := measure(run)
	dur := run.Summary.Serving.DurationSeconds
	per := func(n float64) float64 {
		if dur <= 0 {
			return 0
		}
		return n / dur
	}
	r.set("duration", dur)
	r.set("completed", f.completed)
	r.failed = f.failed
	if o.rerank() {
		r.setPooling(f, per, detailed)
		return r
	}
	r.set("failed", f.failed)
	r.set("total_input_tokens", f.totalInput)
	r.set("total_output_tokens", f.totalOutput)
	r.set("request_throughput", per(float64(f.completed)))
	var goodput any
	if !o.Goodput.IsZero() {
		goodput = per(float64(goodRequests(run.Summary)))
	}
	r.set("request_goodput", goodput)
	r.set("output_throughput", per(float64(f.totalOutput)))
	r.set("total_token_throughput", per(float64(f.totalInput+f.totalOutput)))
	if detailed {
		r.set("input_lens", f.inputLens)
		r.set("output_lens", f.outputLens)
		r.set("ttfts", f.ttfts)
		r.set("itls", f.itls)
	}
	r.set("latencies", f.latencies)
	if detailed {
		r.set("start_times", f.startTimes)
		if run.Texts != nil {
			r.set("generated_texts", spilledTexts{run.Texts, f.spilled})
		} else {
			r.set("generated_texts", f.texts)
		}
		r.set("errors", f.errors)
	}
	r.set("max_output_tokens_per_s", peakOutputRate(run.Summary))
	r.set("max_concurrent_requests", f.peakConcurrency)
	r.set("rtfx", 0.0)
	r.setPercentiles(f, o.reported()...)
	return r
}

// setPooling sets the figures of a pooling (rerank) benchmark, after
// its completed requests, as vLLM's calculate_metrics_for_embeddings
// has them: no output tokens, and of the latencies E2E alone.
func (r *Result) setPooling(f figures, per func(float64) float64, detailed bool) {
	r.set("total_input_tokens", f.totalInput)
	r.set("request_throughput", per(float64(f.completed)))
	r.set("total_token_throughput", per(float64(f.totalInput)))
	if detailed {
		r.set("input_lens", f.inputLens)
		r.set("errors", f.errors)
	}
	r.setPercentiles(f, "e2el")
}

// setPercentiles sets the mean, median, std and percentiles of the
// metrics named, those of --percentile-metrics.
func (r *Result) setPercentiles(f figures, metrics ...string) {
	for _, m := range metrics {
		st := f.stats(m)
		r.set("mean_"+m+"_ms", st.mean)
		r.set("median_"+m+"_ms", st.median)
		r.set("std_"+m+"_ms", st.std)
		for _, p := range r.o.MetricPercentiles {
			r.set("p"+pWord(p)+"_"+m+"_ms", st.percentile(p))
		}
	}
}

// reported are the metrics of --percentile-metrics a result reports, in
// vLLM's order: of a rerank benchmark, E2EL alone.
func (o Options) reported() []string {
	var out []string
	for _, m := range PercentileMetrics {
		if slices.Contains(o.PercentileMetrics, m) && (!o.rerank() || m == "e2el") {
			out = append(out, m)
		}
	}
	return out
}

// pWord is a percentile as vLLM names it: 99, 99.9.
func pWord(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

// figures are what the requests give.
type figures struct {
	completed, failed       int
	totalInput, totalOutput int
	ttft, tpot, itl, e2el   []float64 // ms, completed requests (tpot: those of more than one token)
	peakConcurrency         int
	inputLens, outputLens   []int
	ttfts, latencies        []float64   // seconds, every request, as vLLM lists them
	itls                    [][]float64 // seconds
	startTimes              []float64   // seconds since the first start
	texts, errors           []string
	spilled                 []textRef // where texts lie in Run.Texts
}

// goodRequests are the requests that met the run's goodput bounds, as
// the run counted them (runner's count, the summary's serving goodput);
// 0 when it counted none.
func goodRequests(s *summary.Summary) int64 {
	if s == nil || s.Serving.Goodput == nil {
		return 0
	}
	return s.Serving.Goodput.Good
}

func measure(run Run) figures {
	var f figures
	var first time.Time
	if len(run.Requests) > 0 {
		first = run.Requests[0].Start
	}
	type event struct {
		t     time.Time
		delta int
	}
	var events []event
	for _, req := range run.Requests {
		input := req.RequestedLen
		if input <= 0 {
			input = req.InputTokens
		}
		f.startTimes = append(f.startTimes, req.Start.Sub(first).Seconds())
		f.inputLens = append(f.inputLens, input)
		f.texts = append(f.texts, req.Text)
		f.spilled = append(f.spilled, req.spilled)
		f.errors = append(f.errors, req.Error)
		if !req.OK {
			f.failed++
			f.outputLens = append(f.outputLens, 0)
			f.ttfts = append(f.ttfts, 0)
			f.itls = append(f.itls, []float64{})
			f.latencies = append(f.latencies, 0)
			continue
		}
		f.completed++
		f.totalInput += input
		f.totalOutput += req.OutputTokens
		f.outputLens = append(f.outputLens, req.OutputTokens)
		f.ttfts = append(f.ttfts, req.TTFT/1000)
		f.latencies = append(f.latencies, req.E2E/1000)
		gaps := make([]float64, len(req.ITL))
		for i, ms := range req.ITL {
			gaps[i] = ms / 1000
		}
		f.itls = append(f.itls, gaps)
		f.itl = append(f.itl, req.ITL...)
		f.ttft = append(f.ttft, req.TTFT)
		f.e2el = append(f.e2el, req.E2E)
		if req.OutputTokens > 1 {
			f.tpot = append(f.tpot, req.TPOT)
		}
		end := req.Start.Add(time.Duration(req.E2E * float64(time.Millisecond)))
		events = append(events, event{req.Start, 1}, event{end, -1})
	}
	// The peak of requests in flight over the half-open intervals
	// [start, end): an end before a start at the same time.
	slices.SortFunc(events, func(a, b event) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	n := 0
	for _, e := range events {
		n += e.delta
		f.peakConcurrency = max(f.peakConcurrency, n)
	}
	return f
}

// peakOutputRate is the highest output tokens per second over the run's
// timeline intervals (vLLM: per one-second bucket).
func peakOutputRate(s *summary.Summary) float64 {
	peak := 0.0
	for _, p := range s.Timeline {
		if p.Seconds > 0 {
			peak = max(peak, float64(p.OutputTokens)/p.Seconds)
		}
	}
	return peak
}

// distribution is one metric's statistics, in ms.
type distribution struct {
	mean, median, std float64
	percentile        func(p float64) float64
}

// stats returns metric's statistics over the completed requests.
func (f figures) stats(metric string) distribution {
	return exact(map[string][]float64{"ttft": f.ttft, "tpot": f.tpot, "itl": f.itl, "e2el": f.e2el}[metric])
}

// exact is numpy's statistics of values (0 for none, as vLLM's
// np.mean(values or 0)).
func exact(values []float64) distribution {
	if len(values) == 0 {
		return distribution{percentile: func(float64) float64 { return 0 }}
	}
	sorted := slices.Sorted(slices.Values(values))
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	mean := sum / float64(len(sorted))
	var sq float64
	for _, v := range sorted {
		sq += (v - mean) * (v - mean)
	}
	pct := func(p float64) float64 {
		// numpy's default: linear interpolation between closest ranks.
		h := p / 100 * float64(len(sorted)-1)
		lo := int(math.Floor(h))
		if lo >= len(sorted)-1 {
			return sorted[len(sorted)-1]
		}
		return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
	}
	return distribution{mean: mean, median: pct(50), std: math.Sqrt(sq / float64(len(sorted))), percentile: pct}
}

// metricNames are each metric's name and header in vLLM's block.
var metricNames = map[string][2]string{
	"ttft": {"TTFT", "Time to First Token"},
	"tpot": {"TPOT", "Time per Output Token (excl. 1st token)"},
	"itl":  {"ITL", "Inter-token Latency"},
	"e2el": {"E2EL", "End-to-end Latency"},
}

// Print writes vLLM's "Serving Benchmark Result" block: its labels, in its
// order and its layout ("{:<40} {:<10}").
func (r *Result) Print(w io.Writer) error {
	var b strings.Builder
	line := func(label string, v any) {
		var s string
		switch v := v.(type) {
		case float64:
			s = strconv.FormatFloat(v, 'f', 2, 64)
		default:
			s = fmt.Sprint(v)
		}
		fmt.Fprintf(&b, "%-40s %-10s\n", label, s)
	}
	num := func(key string) float64 {
		switch v := r.values[key].(type) {
		case float64:
			return v
		case int:
			return float64(v)
		}
		return 0
	}
	b.WriteString(center(" Serving Benchmark Result ", '=') + "\n")
	line("Successful requests:", r.values["completed"])
	line("Failed requests:", r.failed)
	if r.o.MaxConcurrency > 0 {
		line("Maximum request concurrency:", r.o.MaxConcurrency)
	}
	if !math.IsInf(r.o.RequestRate, 1) {
		line("Request rate configured (RPS):", r.o.RequestRate)
	}
	line("Benchmark duration (s):", num("duration"))
	line("Total input tokens:", r.values["total_input_tokens"])
	if !r.o.rerank() {
		line("Total generated tokens:", r.values["total_output_tokens"])
	}
	line("Request throughput (req/s):", num("request_throughput"))
	// Printed when counted: with --goodput, and not of a rerank
	// benchmark, which has none (setPooling).
	if r.values["request_goodput"] != nil {
		line("Request goodput (req/s):", num("request_goodput"))
	}
	if !r.o.rerank() {
		line("Output token throughput (tok/s):", num("output_throughput"))
		line("Peak output token throughput (tok/s):", num("max_output_tokens_per_s"))
		line("Peak concurrent requests:", num("max_concurrent_requests"))
	}
	line("Total token throughput (tok/s):", num("total_token_throughput"))
	for _, m := range r.o.reported() {
		name := metricNames[m]
		b.WriteString(center(name[1], '-') + "\n")
		line("Mean "+name[0]+" (ms):", num("mean_"+m+"_ms"))
		line("Median "+name[0]+" (ms):", num("median_"+m+"_ms"))
		for _, p := range r.o.MetricPercentiles {
			line("P"+pWord(p)+" "+name[0]+" (ms):", num("p"+pWord(p)+"_"+m+"_ms"))
		}
	}
	b.WriteString(strings.Repeat("=", 50) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// center centres s in 50 columns of fill, as Python's "{:c^50}": the odd
// column goes to the right.
func center(s string, fill rune) string {
	pad := max(0, 50-len([]rune(s)))
	return strings.Repeat(string(fill), pad/2) + s + strings.Repeat(string(fill), pad-pad/2)
}

// FileName is the result file's path as vLLM names it:
// {label}-{rate}qps[-concurrency{N}]-{model's last part}-{date}.json, or
// filename when given, under dir when given.
func FileName(o Options, modelID string, date time.Time, dir, filename string) string {
	if filename == "" {
		label := o.Label
		if label == "" {
			label = o.Backend
		}
		conc := ""
		if o.MaxConcurrency > 0 {
			conc = fmt.Sprintf("-concurrency%d", o.MaxConcurrency)
		}
		base := modelID[strings.LastIndex(modelID, "/")+1:]
		filename = fmt.Sprintf("%s-%sqps%s-%s-%s.json", label, pyFloat(o.RequestRate), conc, base, date.Format("20060102-150405"))
	}
	if dir != "" {
		return filepath.Join(dir, filename)
	}
	return filename
}
