package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/report"
	"github.com/llmrun/llmrun/runtime/summary"
)

// The tools whose saved results ReadResult reads besides llmrun's: their
// name in a result's Meta.Tool.
const (
	// ToolVLLM: "vllm bench serve --save-result" (vllm/benchmarks/serve.py).
	ToolVLLM = "vllm bench serve"
	// ToolSGLang: "python -m sglang.bench_serving --output-file"
	// (python/sglang/bench_serving.py).
	ToolSGLang = "sglang.bench_serving"
)

// ReadResult reads the result file that compare, trend and report read:
// llmrun's own (summary.ReadJSON), or a run saved by vLLM's or SGLang's
// benchmark, told apart by its keys (docs/results.md, "Reading other
// tools' result files"). Both tools append a run as a line of JSON to a
// file that may hold several (vLLM's --append-result, SGLang's
// --output-file): NAME#N reads the N-th line, and a file of several runs
// named without it is an error that says so.
//
// Another tool's run becomes a summary with what it saved: its serving
// block, and its latencies as histograms when it saved each request's
// (vLLM's --save-detailed, SGLang's --output-details), so that their
// figures and intervals are computed as llmrun's are; else its summary
// numbers only, which Run shows without an interval. What it did not save
// is left empty.
func ReadResult(name string) (*summary.Summary, error) {
	path, line := splitLine(name)
	b, err := summary.ReadBytes(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{")) {
		// Not a JSON object: summary.Parse says what it is.
		return summary.Parse(name, b)
	}
	docs, err := jsonValues(name, quoteNonFinite(b))
	if err != nil {
		return nil, err
	}
	if len(docs) == 1 && (line == 0 || line == 1) && hasKey(docs[0].raw, "schema_version") {
		// llmrun's result file is one run: FILE#1 names it too.
		return summary.Parse(name, b)
	}
	switch {
	case (line < 0 || line > len(docs)) && len(docs) == 1:
		return nil, fmt.Errorf("%s: the file holds 1 run: want %s, or %s#1", name, path, path)
	case line < 0 || line > len(docs):
		return nil, fmt.Errorf("%s: the file holds %d runs, one a line: want %s#1 to %s#%d", name, len(docs), path, path, len(docs))
	case line == 0 && len(docs) > 1:
		return nil, fmt.Errorf("%s: the file holds %d runs, one a line (as vLLM's --append-result and SGLang's --output-file append them): name one as %s#N, N from 1 to %d", name, len(docs), path, len(docs))
	case line > 0:
		docs = docs[line-1 : line]
	}
	return readForeign(name, docs[0])
}

// lineSuffix is the #N that names a run of a file of several.
var lineSuffix = regexp.MustCompile(`#(-?[0-9]+)$`)

// splitLine splits NAME#N into the file's name and N; N is 0 without a
// suffix, and for a file whose own name ends so; -1 when N is no run's
// number (0, negative, or too large to count), which ReadResult refuses
// saying which numbers the file has.
func splitLine(name string) (string, int) {
	m := lineSuffix.FindStringSubmatchIndex(name)
	if m == nil {
		return name, 0
	}
	if _, err := os.Stat(name); err == nil {
		return name, 0
	}
	n, err := strconv.Atoi(name[m[2]:m[3]])
	if err != nil || n < 1 {
		n = -1
	}
	return name[:m[0]], n
}

// ReportName is the HTML file llmrun report writes of the result file
// name by default: its name with .html, and for FILE#N, the N-th run of
// a file of several, FILE-N.html, so that each run has a page of its own.
func ReportName(name string) string {
	path, line := splitLine(name)
	page := strings.TrimSuffix(path, filepath.Ext(path))
	if line > 0 {
		page += "-" + strconv.Itoa(line)
	}
	return page + ".html"
}

// SameResult reports whether the result files a and b, as ReadResult
// names them, are one run: one file, under any path or link, and the
// same run of it (FILE and FILE#1 are one).
func SameResult(a, b string) bool {
	pa, la := splitLine(a)
	pb, lb := splitLine(b)
	if la == 0 {
		la = 1
	}
	if lb == 0 {
		lb = 1
	}
	if la != lb {
		return false
	}
	if pa == pb {
		return true
	}
	fa, errA := os.Stat(pa)
	fb, errB := os.Stat(pb)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// jsonDoc is one JSON value of a file, with where it starts.
type jsonDoc struct {
	raw    json.RawMessage
	offset int64
	line   int
}

// jsonValues splits b into its JSON values, one or several (JSON Lines).
// An error names the file, the line, and the key whose value is not
// JSON: Python writes NaN and Infinity, which JSON has not.
func jsonValues(name string, b []byte) ([]jsonDoc, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s: not valid JSON: the file is empty", name)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var docs []jsonDoc
	for {
		start := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, jsonError(name, b, err)
		}
		at := start + int64(len(b[start:])-len(bytes.TrimLeft(b[start:], " \t\r\n")))
		docs = append(docs, jsonDoc{raw: raw, offset: at, line: bytes.Count(b[:at], []byte("\n")) + 1})
	}
}

// keyBefore finds the key of the value that starts at the end of a text.
var keyBefore = regexp.MustCompile(`"((?:[^"\\]|\\.){1,200})"\s*:\s*[^,{}\[\]":]*$`)

// jsonError says where b is not JSON, and in which key.
func jsonError(name string, b []byte, err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: not valid JSON: the file ends in the middle of a value (cut short?)", name)
	case !errors.As(err, &syn):
		return fmt.Errorf("%s: not valid JSON: %w", name, err)
	}
	if syn.Offset >= int64(len(bytes.TrimRight(b, " \t\r\n"))) {
		return fmt.Errorf("%s: not valid JSON: the file ends in the middle of a value (cut short?)", name)
	}
	off := min(syn.Offset, int64(len(b)))
	line, col := bytes.Count(b[:off], []byte("\n"))+1, off-int64(bytes.LastIndexByte(b[:off], '\n'))-1
	msg := fmt.Sprintf("%s:%d:%d: not valid JSON: %s", name, line, col, strings.TrimPrefix(syn.Error(), "json: "))
	if m := keyBefore.FindSubmatch(b[max(0, off-260):off]); m != nil {
		msg += fmt.Sprintf(", in the value of %q", m[1])
	}
	return errors.New(msg)
}

// nonFinite are the words Python's json writes for the floats JSON has
// not.
var nonFinite = [][]byte{[]byte("-Infinity"), []byte("Infinity"), []byte("NaN")}

// quoteNonFinite quotes the NaN and Infinity that Python's json writes
// outside strings (SGLang saves an unbounded request rate as Infinity),
// so that the file decodes and a key that holds one is named: as a
// string where a number belongs, or read as the word it is.
func quoteNonFinite(b []byte) []byte {
	var out []byte
	inString, last := false, 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == 'N' || c == 'I' || c == '-'):
			for _, w := range nonFinite {
				if bytes.HasPrefix(b[i:], w) {
					out = append(append(append(append(out, b[last:i]...), '"'), w...), '"')
					i += len(w) - 1
					last = i + 1
					break
				}
			}
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// hasKey reports whether the JSON object raw has the top-level key.
func hasKey(raw json.RawMessage, key string) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	_, ok := obj[key]
	return ok
}

// foreignRun is one run of another tool's file: its keys, read with
// errors that name the file, the line and the key.
type foreignRun struct {
	name string
	line int
	keys map[string]json.RawMessage
}

func (r foreignRun) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %q: %s", r.name, r.line, key, fmt.Sprintf(format, args...))
}

// has reports whether the run has key with a value other than null.
func (r foreignRun) has(key string) bool {
	v, ok := r.keys[key]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// number is the value of key: ok false when absent or null, an error when
// it is not a finite number ≥ 0.
func (r foreignRun) number(key string) (float64, bool, error) {
	if !r.has(key) {
		return 0, false, nil
	}
	var v float64
	if err := json.Unmarshal(r.keys[key], &v); err != nil {
		return 0, false, r.errorf(key, "want a number, got %s%s", clip(r.keys[key]), nonFiniteWhy(r.keys[key]))
	}
	if v < 0 {
		return 0, false, r.errorf(key, "want a number ≥ 0, got %g", v)
	}
	return v, true, nil
}

// nonFiniteWhy says what a NaN or Infinity the tool wrote means.
func nonFiniteWhy(raw []byte) string {
	for _, w := range nonFinite {
		if string(bytes.TrimSpace(raw)) == `"`+string(w)+`"` {
			return " (the tool wrote a figure it could not compute: it cannot be compared)"
		}
	}
	return ""
}

// count is the value of key as a count.
func (r foreignRun) count(key string) (int64, bool, error) {
	v, ok, err := r.number(key)
	if err != nil || !ok {
		return 0, ok, err
	}
	if v != math.Trunc(v) || v > summary.MaxCount {
		return 0, false, r.errorf(key, "want a whole number up to %d, got %g", int64(summary.MaxCount), v)
	}
	return int64(v), true, nil
}

// numbers is the list of numbers of key, scaled by scale; nil when absent.
func (r foreignRun) numbers(key string, scale float64) ([]float64, error) {
	if !r.has(key) {
		return nil, nil
	}
	var vs []json.RawMessage
	if err := json.Unmarshal(r.keys[key], &vs); err != nil {
		return nil, r.errorf(key, "want a list of numbers: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	out := make([]float64, len(vs))
	for i, raw := range vs {
		v, err := r.listNumber(key, strconv.Itoa(i), raw)
		if err != nil {
			return nil, err
		}
		out[i] = v * scale
	}
	return out, nil
}

// numberLists is the list of lists of numbers of key (seconds), in ms.
func (r foreignRun) numberLists(key string) ([][]float64, error) {
	if !r.has(key) {
		return nil, nil
	}
	var vs [][]json.RawMessage
	if err := json.Unmarshal(r.keys[key], &vs); err != nil {
		return nil, r.errorf(key, "want a list of lists of numbers: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	out := make([][]float64, len(vs))
	for i, l := range vs {
		out[i] = make([]float64, len(l))
		for j, raw := range l {
			v, err := r.listNumber(key, fmt.Sprintf("%d.%d", i, j), raw)
			if err != nil {
				return nil, err
			}
			out[i][j] = v * 1000
		}
	}
	return out, nil
}

// listNumber is item (its index) of the lists of key: an error, naming
// them, when it is not a number ≥ 0 (null, a string, or the NaN or
// Infinity the tool wrote).
func (r foreignRun) listNumber(key, item string, raw json.RawMessage) (float64, error) {
	var v float64
	if string(bytes.TrimSpace(raw)) == "null" || json.Unmarshal(raw, &v) != nil || v < 0 {
		return 0, r.errorf(key, "item %s: want a number ≥ 0, got %s%s", item, clip(raw), nonFiniteWhy(raw))
	}
	return v, nil
}

// strings is the list of strings of key; nil when absent.
func (r foreignRun) strings(key string) ([]string, error) {
	if !r.has(key) {
		return nil, nil
	}
	var vs []*string
	if err := json.Unmarshal(r.keys[key], &vs); err != nil {
		return nil, r.errorf(key, "want a list of strings: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = *v
		}
	}
	return out, nil
}

// text is the string of key, or its JSON when it is not a string.
func (r foreignRun) text(key string) string {
	var s string
	if !r.has(key) {
		return ""
	}
	if json.Unmarshal(r.keys[key], &s) != nil {
		return string(r.keys[key])
	}
	return s
}

// clip is a value's JSON cut to a length an error can show.
func clip(b []byte) string {
	const most = 40
	if s := string(bytes.TrimSpace(b)); len(s) <= most {
		return s
	} else {
		return s[:most] + "..."
	}
}

// foreignLatency is a latency of another tool's result: llmrun's metric,
// and the tool's name for it in its keys (S_NAME_ms).
type foreignLatency struct {
	metric, vllm, sglang string
}

var foreignLatencies = []foreignLatency{
	{"llm_ttft", "ttft", "ttft"},
	{"llm_tpot", "tpot", "tpot"},
	{"llm_itl", "itl", "itl"},
	{"llm_e2e", "e2el", "e2e_latency"},
}

// foreignStat is a statistic of the tools' keys S_NAME_ms: S, the name
// of its value in a result file's Values, and the suffix of its figure
// (regression's ttft_p50).
type foreignStat struct {
	key, value, figure string
}

// foreignStats are the statistics read, in the order read: of median and
// p50, which name one value, the first the file has is read. The tools'
// std has no such value.
var foreignStats = []foreignStat{
	{"mean", "avg", "mean"}, {"median", "med", "p50"}, {"p50", "med", "p50"}, {"p90", "p(90)", "p90"},
	{"p95", "p(95)", "p95"}, {"p99", "p(99)", "p99"}, {"max", "max", "max"},
}

// readForeign reads one run of vLLM's or SGLang's saved results.
func readForeign(name string, doc jsonDoc) (*summary.Summary, error) {
	r := foreignRun{name: name, line: doc.line}
	if err := json.Unmarshal(doc.raw, &r.keys); err != nil {
		return nil, fmt.Errorf("%s:%d: not a result file llmrun reads: want a JSON object, got %s", name, doc.line, clip(doc.raw))
	}
	tool := ""
	switch {
	case r.has("duration") && r.has("completed") && (r.has("mean_e2e_latency_ms") || r.has("dataset_name")):
		tool = ToolSGLang
	case r.has("duration") && r.has("completed") && r.has("backend"):
		tool = ToolVLLM
	default:
		return nil, fmt.Errorf("%s: not a result file llmrun reads: neither llmrun's (no schema_version) nor a run vLLM's bench serve or SGLang's bench_serving saved (no duration, completed and backend)", name)
	}
	s := &summary.Summary{SchemaVersion: summary.SchemaVersion, Metrics: map[string]summary.MetricSummary{}}
	s.Meta.Tool = tool
	r.meta(&s.Meta)
	// The requests' errors, one a request (SGLang saves whole tracebacks):
	// read once for the failures' count, their messages and the samples.
	errs, err := r.strings("errors")
	if err != nil {
		return nil, err
	}
	if err := r.serving(&s.Serving, errs); err != nil {
		return nil, err
	}
	s.Errors = failures(tool, s.Serving.Failed, errs)
	detailed, err := r.samples(errs)
	if err != nil {
		return nil, err
	}
	for _, l := range foreignLatencies {
		key := l.vllm
		if tool == ToolSGLang {
			key = l.sglang
		}
		if vs, ok := detailed[l.metric]; ok {
			st := metrics.TrendOf(vs)
			s.Metrics[l.metric] = summary.MetricSummary{Type: "trend", Contains: "time", Values: summary.Values(st, 0), Histogram: summary.NewHistogram(st)}
			continue
		}
		values := map[string]float64{}
		for _, stat := range foreignStats {
			v, ok, err := r.number(stat.key + "_" + key + "_ms")
			if err != nil {
				return nil, err
			}
			if _, read := values[stat.value]; ok && !read {
				values[stat.value] = v
			}
		}
		if len(values) > 0 {
			s.Metrics[l.metric] = summary.MetricSummary{Type: "trend", Contains: "time", Values: values}
		}
	}
	s.Latency = foreignRows(s)
	return s, nil
}

// foreignLatencyLabels are the labels of the latency rows.
var foreignLatencyLabels = map[string]string{"llm_ttft": "TTFT", "llm_tpot": "TPOT", "llm_itl": "ITL", "llm_e2e": "E2E"}

// foreignRows are the latency rows of another tool's run: computed from
// the histograms of its requests' samples as llmrun's are, else of the
// statistics it saved, those it did not save NaN (shown as "-").
func foreignRows(s *summary.Summary) []summary.LatencyRow {
	var rows []summary.LatencyRow
	for _, l := range foreignLatencies {
		m, ok := s.Metrics[l.metric]
		if !ok {
			continue
		}
		if m.Histogram != nil {
			rows = append(rows, summary.LatencyRows(func(metric string) *metrics.Stats {
				if metric != l.metric {
					return nil
				}
				st, err := m.Histogram.Stats()
				if err != nil {
					return nil
				}
				return st
			})...)
			continue
		}
		value := func(k string) float64 {
			if v, ok := m.Values[k]; ok {
				return v
			}
			return math.NaN()
		}
		// Each successful request has a TTFT and an E2E; the tools
		// saved neither how many had a TPOT (one token) nor how many
		// gaps the ITL figures are of: their count is not known (0).
		var count int64
		if l.metric == "llm_ttft" || l.metric == "llm_e2e" {
			count = s.Serving.OK
		}
		row := summary.LatencyRow{Metric: l.metric, Label: foreignLatencyLabels[l.metric], Count: count,
			Mean: value("avg"), Min: math.NaN(), Max: value("max"), P: map[string]float64{}}
		for _, p := range summary.Percentiles {
			k := fmt.Sprintf("p(%g)", p)
			if p == 50 {
				k = "med"
			}
			row.P[fmt.Sprintf("p%g", p)] = value(k)
		}
		rows = append(rows, row)
	}
	return rows
}

// meta reads what the run says of itself: its model, start and load.
func (r foreignRun) meta(m *summary.Meta) {
	if model := r.text("model_id"); model != "" {
		m.Models = []string{model}
	}
	if d := r.text("date"); d != "" {
		// vLLM's date is its machine's local time, zone unknown.
		if t, err := time.Parse("20060102-150405", d); err == nil {
			m.Start = t
		}
	}
	rate, maxConc := r.text("request_rate"), r.text("max_concurrency")
	shape := summary.ScenarioShape{Name: "default", Executor: "constant-arrival-rate"}
	shape.Description = fmt.Sprintf("%s: request_rate %s, max_concurrency %s", m.Tool, orDash(rate), orDash(maxConc))
	if rate == "inf" || rate == "Infinity" || rate == "" {
		// Every request sent at once, max_concurrency at a time: a
		// closed loop.
		shape.Executor = "shared-iterations"
		if n, err := strconv.Atoi(maxConc); err == nil {
			shape.MaxVUs = n
		}
	}
	m.LoadShape = []summary.ScenarioShape{shape}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// serving reads the run's serving block; errs are the requests' errors
// (nil when not saved).
func (r foreignRun) serving(sv *summary.Serving, errs []string) error {
	var err error
	var ok bool
	if sv.DurationSeconds, ok, err = r.number("duration"); err != nil || !ok || sv.DurationSeconds == 0 {
		if err == nil {
			err = r.errorf("duration", "want the run's seconds, more than 0")
		}
		return err
	}
	if sv.OK, _, err = r.count("completed"); err != nil {
		return err
	}
	failed, hasFailed, err := r.count("failed")
	if err != nil {
		return err
	}
	if !hasFailed {
		// SGLang saves no count of failures: its errors list, when saved,
		// has them.
		for _, e := range errs {
			if e != "" {
				failed++
			}
		}
		hasFailed = errs != nil
	}
	if hasFailed {
		sv.Failed, sv.Requests = failed, sv.OK+failed
		if sv.Requests > 0 {
			sv.SuccessRate = float64(sv.OK) / float64(sv.Requests)
		}
	}
	if sv.PromptTokens, _, err = r.count("total_input_tokens"); err != nil {
		return err
	}
	if sv.OutputTokens, _, err = r.count("total_output_tokens"); err != nil {
		return err
	}
	if sv.OK > 0 {
		sv.MeanInputTokens = float64(sv.PromptTokens) / float64(sv.OK)
		sv.MeanOutputTokens = float64(sv.OutputTokens) / float64(sv.OK)
	}
	for key, dst := range map[string]*float64{"request_throughput": &sv.RequestThroughput, "output_throughput": &sv.OutputTokenThroughput, "total_token_throughput": &sv.TotalTokenThroughput} {
		if *dst, _, err = r.number(key); err != nil {
			return err
		}
	}
	if sv.TotalTokenThroughput == 0 {
		// SGLang's figure: input and output tokens over the duration.
		sv.TotalTokenThroughput = float64(sv.PromptTokens+sv.OutputTokens) / sv.DurationSeconds
	}
	return nil
}

// maxForeignMessages and maxForeignMessageLen bound what the error table
// keeps of another tool's error messages: the first few distinct ones,
// cut (SGLang saves whole tracebacks).
const (
	maxForeignMessages   = 3
	maxForeignMessageLen = 300
)

// failures are the run's failed requests as one error class (the tools
// save none), with the first distinct messages of errs, its requests'
// errors, when it saved them.
func failures(tool string, failed int64, errs []string) []summary.ErrorClassCount {
	if failed == 0 {
		return nil
	}
	c := summary.ErrorClassCount{Class: "failed (" + tool + " saves no class)", Count: failed}
	seen := map[string]int{}
	for _, e := range errs {
		if e == "" {
			continue
		}
		e = strings.Map(func(c rune) rune {
			if c < ' ' && c != '\n' || c == 0x7f {
				return -1
			}
			return c
		}, strings.ToValidUTF8(e, "?"))
		if len(e) > maxForeignMessageLen {
			e = strings.ToValidUTF8(e[:maxForeignMessageLen], "") + "..."
		}
		if i, ok := seen[e]; ok {
			c.Messages[i].Count++
		} else if len(c.Messages) < maxForeignMessages {
			seen[e] = len(c.Messages)
			c.Messages = append(c.Messages, summary.ErrorCount{Message: e, Count: 1})
		}
	}
	return []summary.ErrorClassCount{c}
}

// samples are the latencies (ms) of the run's successful requests (errs
// "" for them), by llmrun's metric, computed as both tools compute their
// figures from them: none when the run did not save its requests.
func (r foreignRun) samples(errs []string) (map[string][]float64, error) {
	ttfts, err := r.numbers("ttfts", 1000)
	if err != nil || ttfts == nil {
		return nil, err
	}
	itls, err := r.numberLists("itls")
	if err != nil {
		return nil, err
	}
	latencies, err := r.numbers("latencies", 1000)
	if err != nil {
		return nil, err
	}
	outLens, err := r.numbers("output_lens", 1)
	if err != nil {
		return nil, err
	}
	n := len(ttfts)
	for key, l := range map[string]int{"itls": len(itls), "output_lens": len(outLens), "errors": len(errs)} {
		if l != n {
			return nil, r.errorf(key, "%d items, but ttfts has %d: a list a request", l, n)
		}
	}
	if latencies != nil && len(latencies) != n {
		return nil, r.errorf("latencies", "%d items, but ttfts has %d: a list a request", len(latencies), n)
	}
	out := map[string][]float64{}
	for i := range n {
		if errs[i] != "" {
			continue
		}
		out["llm_ttft"] = append(out["llm_ttft"], ttfts[i])
		if latencies == nil {
			// Without each request's latency (SGLang's details) its TPOT
			// is not known, nor how many requests its gaps stand on.
			continue
		}
		if latencies[i] < ttfts[i] {
			return nil, r.errorf("latencies", "item %d: %g s, less than its time to first token (ttfts item %d, %g s)", i, latencies[i]/1000, i, ttfts[i]/1000)
		}
		out["llm_itl"] = append(out["llm_itl"], itls[i]...)
		out["llm_e2e"] = append(out["llm_e2e"], latencies[i])
		if outLens[i] > 1 {
			out["llm_tpot"] = append(out["llm_tpot"], (latencies[i]-ttfts[i])/(outLens[i]-1))
		}
	}
	return out, nil
}

// source is where s, read from the file name, came from, for its
// report's header: the zero Source for llmrun's own result.
func source(name string, s *summary.Summary) report.Source {
	switch s.Meta.Tool {
	case ToolVLLM:
		// vLLM's date is its machine's local time, saved without a zone.
		return report.Source{Tool: "vLLM bench serve", File: name, LocalStart: true}
	case ToolSGLang:
		return report.Source{Tool: "SGLang bench_serving", File: name}
	}
	return report.Source{}
}

// foreignWhy says why a figure of another tool's file has no interval.
func foreignWhy(tool string) string {
	option := "--save-detailed"
	if tool == ToolSGLang {
		option = "--output-details"
	}
	return fmt.Sprintf("%s saved this figure without its requests' samples (save them with %s): its noise cannot be bounded", tool, option)
}

// Run is the figures of a result read by ReadResult, with their intervals
// at conf: regression.FromSummary's, and for another tool's result the
// latency figures it saved as numbers only, shown without an interval
// (inconclusive, never unchanged).
func Run(s *summary.Summary, conf float64) regression.Run {
	run := regression.FromSummary(s, conf)
	if !foreign(s) {
		return run
	}
	if run.ID == "" {
		run.ID = s.Meta.Tool
	}
	// vLLM's date is its machine's local time, saved without a zone.
	run.LocalTime = s.Meta.Tool == ToolVLLM
	run.Unsaved = s.Meta.Tool + "'s result file has no such figure: what a tool did not save cannot be compared"
	for _, l := range foreignLatencies {
		m, ok := s.Metrics[l.metric]
		if !ok || m.Histogram != nil {
			continue
		}
		prefix := strings.TrimPrefix(l.metric, "llm_") + "_"
		for _, stat := range foreignStats {
			if v, ok := m.Values[stat.value]; ok {
				run.Figures[prefix+stat.figure] = regression.Estimate{Value: v, Lo: math.Inf(-1), Hi: math.Inf(1), N: s.Serving.OK, Why: foreignWhy(s.Meta.Tool)}
			}
		}
	}
	return run
}
