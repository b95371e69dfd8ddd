package results

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
)

// foreignDir holds vLLM's and SGLang's result files (see its PROVENANCE).
const foreignDir = "testdata/foreign"

// The latencies of vLLM's detailed file are computed from its requests'
// samples, the mean of each as vLLM computed it; its summary-only file
// shows the same numbers without an interval, the reason said.
func TestReadVLLMResult(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(foreignDir, "vllm-detailed.json"))
	if err != nil {
		t.Fatal(err)
	}
	var theirs map[string]any
	if err := json.Unmarshal(raw, &theirs); err != nil {
		t.Fatal(err)
	}
	s, err := ReadResult(filepath.Join(foreignDir, "vllm-detailed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Meta.Tool != ToolVLLM || s.Serving.OK != 234 || s.Serving.Failed != 6 || s.Serving.Requests != 240 {
		t.Errorf("tool %q, %d ok, %d failed of %d; want %q, 234 ok, 6 failed of 240", s.Meta.Tool, s.Serving.OK, s.Serving.Failed, s.Serving.Requests, ToolVLLM)
	}
	if len(s.Errors) != 1 || s.Errors[0].Count != 6 || len(s.Errors[0].Messages) != 1 || s.Errors[0].Messages[0] != (summary.ErrorCount{Message: "Bad Request", Count: 6}) {
		t.Errorf("errors %+v, want one class of 6, its message Bad Request 6 times", s.Errors)
	}
	run := Run(s, regression.DefaultConfidence)
	for figure, key := range map[string]string{"ttft_mean": "mean_ttft_ms", "tpot_mean": "mean_tpot_ms", "itl_mean": "mean_itl_ms", "e2e_mean": "mean_e2el_ms"} {
		e, ok := run.Figures[figure]
		want := theirs[key].(float64)
		if !ok || math.Abs(e.Value-want) > 1e-6*want || !e.Bounded() {
			t.Errorf("%s: %+v, want %g (vLLM's %s) with an interval", figure, e, want, key)
		}
	}
	for figure, key := range map[string]string{"ttft_p50": "p50_ttft_ms", "e2e_p90": "p90_e2el_ms"} {
		// HdrHistogram keeps 3 significant digits; numpy interpolates
		// between the samples either side.
		if e, want := run.Figures[figure], theirs[key].(float64); math.Abs(e.Value-want) > 0.02*want {
			t.Errorf("%s: %g, want %g (vLLM's %s) within 2 %%", figure, e.Value, want, key)
		}
	}

	s, err = ReadResult(filepath.Join(foreignDir, "vllm-summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	run = Run(s, regression.DefaultConfidence)
	e := run.Figures["ttft_p99"]
	if e.Value != theirs["p99_ttft_ms"].(float64) || e.Bounded() || !strings.Contains(e.Why, "--save-detailed") {
		t.Errorf("ttft_p99 of the summary numbers: %+v, want %g unbounded, the reason naming --save-detailed", e, theirs["p99_ttft_ms"])
	}
	if _, ok := run.Figures["ttft_p95"]; ok {
		t.Error("ttft_p95, which the file has not, is a figure")
	}
	if e := run.Figures["success_rate"]; !e.Bounded() || e.Value != 0.975 {
		t.Errorf("success_rate %+v, want 97.5 %% with an interval from its counts", e)
	}
}

// SGLang's file holds a run a line: FILE#N reads the N-th; its details
// give TTFT's samples, not each request's latency, so TPOT and E2E stay
// numbers only; without details it has no count of failures.
func TestReadSGLangResult(t *testing.T) {
	t.Parallel()
	file := filepath.Join(foreignDir, "sglang.jsonl")
	first, err := ReadResult(file + "#1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := ReadResult(file + "#2")
	if err != nil {
		t.Fatal(err)
	}
	if first.Meta.Tool != ToolSGLang || first.Serving.Requests != 0 || first.Serving.OK != 160 {
		t.Errorf("line 1: tool %q, %d requests, %d ok; want %q, unknown (0), 160", first.Meta.Tool, first.Serving.Requests, first.Serving.OK, ToolSGLang)
	}
	if second.Serving.Requests != 160 || second.Metrics["llm_ttft"].Histogram == nil || second.Metrics["llm_e2e"].Histogram != nil {
		t.Errorf("line 2: %d requests, TTFT histogram %v, E2E histogram %v; want 160, TTFT's only",
			second.Serving.Requests, second.Metrics["llm_ttft"].Histogram != nil, second.Metrics["llm_e2e"].Histogram != nil)
	}
	if _, ok := Run(first, regression.DefaultConfidence).Figures["success_rate"]; ok {
		t.Error("line 1 has a success rate, with no count of failures")
	}
	// What line 1 did not save is inconclusive against a run that has it,
	// whichever is the baseline: never a pass for want of a figure.
	own := writeResult(t, t.TempDir(), "own", "abc", 100)
	gate := Gate{Options: regression.Options{Tolerance: 0.1, Confidence: regression.DefaultConfidence}, Figures: regression.Headline()}
	for _, pair := range [][2]string{{file + "#1", own}, {own, file + "#1"}} {
		c, err := CompareFiles(pair[0], pair[1], "", gate)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmp := range c.Comparisons {
			if cmp.Figure.Name == "success_rate" && cmp.Verdict != regression.Inconclusive {
				t.Errorf("%s against %s: success_rate %q (%s), want inconclusive", pair[1], pair[0], cmp.Verdict, cmp.Reason)
			}
		}
	}
	for name, want := range map[string]string{
		file:        "the file holds 2 runs, one a line (as vLLM's --append-result and SGLang's --output-file append them): name one as " + file + "#N, N from 1 to 2",
		file + "#3": "the file holds 2 runs, one a line: want " + file + "#1 to " + file + "#2",
	} {
		if _, err := ReadResult(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// A file that is not a result, or is one gone wrong, is an error that
// names the file and, where it can, the line and the key; never a panic.
func TestReadResultHostile(t *testing.T) {
	t.Parallel()
	valid := `"backend": "vllm", "duration": 10, "completed": 2, "failed": 0, "request_throughput": 0.2`
	huge := `"ttfts": [` + strings.Repeat("0.1,", 200000) + `0.1], "itls": [], "output_lens": [], "errors": []`
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", []string{"the file is empty"}},
		{"truncated", `{` + valid + `, "mean_ttft_ms": 12.`, []string{"cut short"}},
		{"NaN where a number belongs", "{" + valid + `, "mean_ttft_ms": NaN}`, []string{`"mean_ttft_ms": want a number, got "NaN"`, "could not compute"}},
		{"-Infinity where a number belongs", "{" + valid + `, "p99_tpot_ms": -Infinity}`, []string{`"p99_tpot_ms": want a number, got "-Infinity"`}},
		{"a string where a number belongs", "{" + valid + `, "p99_ttft_ms": "fast"}`, []string{`:1: "p99_ttft_ms": want a number, got "fast"`}},
		{"a negative count", `{"backend": "vllm", "duration": 10, "completed": -3}`, []string{`"completed": want a number ≥ 0, got -3`}},
		{"no duration", `{"backend": "vllm", "duration": 0, "completed": 3}`, []string{`"duration": want the run's seconds, more than 0`}},
		{"lists of requests that disagree", "{" + valid + ", " + huge + "}", []string{`"`, "items, but ttfts has 200001: a list a request"}},
		{"a request's gaps not numbers", "{" + valid + `, "ttfts": [0.1], "itls": [["a"]], "output_lens": [3], "errors": [""]}`, []string{`"itls": item 0.0: want a number ≥ 0, got "a"`}},
		{"a request's gaps not lists", "{" + valid + `, "ttfts": [0.1], "itls": [3], "output_lens": [3], "errors": [""]}`, []string{`"itls": want a list of lists of numbers`}},
		{"a gap null", "{" + valid + `, "ttfts": [0.1], "itls": [[0.01, null]], "output_lens": [3], "errors": [""]}`, []string{`"itls": item 0.1: want a number ≥ 0, got null`}},
		{"NaN among the requests", "{" + valid + `, "ttfts": [0.1, NaN], "itls": [[], []], "output_lens": [1, 1], "errors": ["", ""]}`,
			[]string{`"ttfts": item 1: want a number ≥ 0, got "NaN" (the tool wrote a figure it could not compute`}},
		{"a request that ended before its first token", "{" + valid + `, "ttfts": [0.1, 0.5], "itls": [[], []], "latencies": [0.3, 0.2], "output_lens": [1, 1], "errors": ["", ""]}`,
			[]string{`"latencies": item 1: 0.2 s, less than its time to first token (ttfts item 1, 0.5 s)`}},
		{"not JSON", "<html>", []string{":1:1: not valid JSON"}},
		{"bad JSON inside a key", "{" + valid + `, "mean_ttft_ms": 1.2.3}`, []string{`:1:`, `not valid JSON`, `in the value of "mean_ttft_ms"`}},
		{"JSON of another kind", `{"name": "x", "values": [1, 2]}`, []string{"not a result file llmrun reads: neither llmrun's (no schema_version) nor a run vLLM's bench serve or SGLang's bench_serving saved"}},
		{"a list", `[1, 2]`, []string{"not an llmrun result file: want a JSON object"}},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(file, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadResult(file)
			if err == nil {
				t.Fatal("read without an error")
			}
			for _, w := range append([]string{file}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// The N-th run of a file of several that is not a JSON object is an
// error naming the file and its line.
func TestReadResultLineNotAnObject(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := os.WriteFile(file, []byte(`{"backend": "vllm", "duration": 1, "completed": 1}`+"\n[3]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadResult(file + "#1"); err != nil {
		t.Errorf("line 1: %v", err)
	}
	want := file + "#2:2: not a result file llmrun reads: want a JSON object, got [3]"
	if _, err := ReadResult(file + "#2"); err == nil || err.Error() != want {
		t.Errorf("line 2: %v, want %q", err, want)
	}
}

// An unbounded request rate SGLang writes as Python's Infinity is read,
// and a word in a string is left as it is.
func TestReadResultInfiniteRate(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "sglang.jsonl")
	text := `{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": 8, "duration": 10, "completed": 5, "mean_ttft_ms": 20, "note": "NaN Infinity"}` + "\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ReadResult(file)
	if err != nil {
		t.Fatal(err)
	}
	if sh := s.Meta.LoadShape[0]; !regression.ClosedLoop(sh.Executor) || sh.MaxVUs != 8 {
		t.Errorf("load shape %+v, want a closed loop of 8", sh)
	}
}

// FILE#N names a run of a file: FILE#1 is llmrun's own result file too,
// and a number no run has is an error saying which numbers the file has,
// whatever the number (0, negative, too large to count).
func TestReadResultRunNumbers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	own := writeResult(t, dir, "own", "abc", 100)
	runs := filepath.Join(foreignDir, "sglang.jsonl")
	if s, err := ReadResult(own + "#1"); err != nil || s.Meta.RunID != "own" {
		t.Errorf("%s#1: %v, want llmrun's run own", own, err)
	}
	for name, want := range map[string]string{
		own + "#2":                     own + "#2: the file holds 1 run: want " + own + ", or " + own + "#1",
		own + "#0":                     own + "#0: the file holds 1 run: want " + own + ", or " + own + "#1",
		runs + "#0":                    runs + "#0: the file holds 2 runs, one a line: want " + runs + "#1 to " + runs + "#2",
		runs + "#-1":                   runs + "#-1: the file holds 2 runs, one a line: want " + runs + "#1 to " + runs + "#2",
		runs + "#99999999999999999999": runs + "#99999999999999999999: the file holds 2 runs, one a line: want " + runs + "#1 to " + runs + "#2",
	} {
		if _, err := ReadResult(name); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// A file whose statistics disagree (median and p50 both saved, unequal)
// reads the same every time: the median, the first of the two read.
func TestReadResultMedianFirst(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "vllm.json")
	text := `{"backend": "vllm", "duration": 10, "completed": 5, "median_ttft_ms": 10, "p50_ttft_ms": 20}`
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		s, err := ReadResult(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := Run(s, regression.DefaultConfidence).Figures["ttft_p50"].Value; got != 10 {
			t.Fatalf("ttft_p50 %g, want 10 (median_ttft_ms)", got)
		}
	}
}

// SameResult tells one run under two names from two runs.
func TestSameResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := writeResult(t, dir, "a", "abc", 100), writeResult(t, dir, "b", "abc", 100)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(foreignDir, "sglang.jsonl")
	for _, tc := range []struct {
		x, y string
		same bool
	}{
		{a, a, true},
		{a, dir + "/./a.json", true},
		{a, link, true},
		{a, a + "#1", true},
		{a, b, false},
		{runs + "#1", runs + "#2", false},
		{runs + "#2", "./" + runs + "#2", true},
		{a, filepath.Join(dir, "missing.json"), false},
	} {
		if got := SameResult(tc.x, tc.y); got != tc.same {
			t.Errorf("SameResult(%s, %s) = %v, want %v", tc.x, tc.y, got, tc.same)
		}
	}
}
