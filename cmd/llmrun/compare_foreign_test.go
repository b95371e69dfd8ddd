package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// foreignData is where the vLLM and SGLang result files of the tests
// are, with their PROVENANCE.
const foreignData = "../../runtime/results/testdata/foreign"

// chatRAGScript runs two scenarios against the built-in simulator.
const chatRAGScript = `
import llm from 'llm';
export const options = {
  scenarios: {
    chat: { executor: 'shared-iterations', vus: 4, iterations: 60, exec: 'chat' },
    rag: { executor: 'shared-iterations', vus: 2, iterations: 30, exec: 'rag' },
  },
};
export function chat() {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 8, ignore_eos: true });
}
export function rag() {
  llm.stream({ messages: [{ role: 'user', content: 'Summarise the document.' }], max_tokens: 16, ignore_eos: true });
}
`

// mixedRun is the result file of a run of chatRAGScript.
func mixedRun(t *testing.T, dir, name string) string {
	t.Helper()
	script := writeScript(t, "mixed.js", chatRAGScript)
	file := filepath.Join(dir, name+".json")
	if code, stdout, stderr := command(t, "run", "-q", "--no-color", "--summary-export", file, script); code != exitcode.OK {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return file
}

// judged reports whether compare or trend judged the runs: whatever the
// verdict, which the figures of different servers, or a client its loaded
// machine limited, make what they make.
func judged(code int) bool {
	return code == exitcode.OK || code == exitcode.Regression || code == exitcode.MachineLimited
}

// verdictOf is the verdict cell of figure's row in compare's table.
func verdictOf(stdout, figure string) string {
	for line := range strings.SplitSeq(stdout, "\n") {
		cells := strings.Split(line, "│")
		if len(cells) > 2 && strings.HasPrefix(strings.TrimSpace(cells[1]), figure+" ") {
			return strings.TrimSpace(cells[len(cells)-2])
		}
	}
	return ""
}

// compare reads vLLM's and SGLang's saved results beside llmrun's: an
// llmrun run against the simulator compared with each, the figures a
// file saved each request's samples of are judged, those it saved as
// numbers only are inconclusive with the reason, and so are those it
// lacks (issue 32: never a pass for want of a figure); --scenario compares one scenario of two mixed runs, and names
// the scenarios a file has when it lacks the one asked.
func TestCompareForeignResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	llmrunA, llmrunB := mixedRun(t, dir, "a"), mixedRun(t, dir, "b")
	detailed := filepath.Join(foreignData, "vllm-detailed.json")
	summaryOnly := filepath.Join(foreignData, "vllm-summary.json")
	sglang := filepath.Join(foreignData, "sglang.jsonl")

	type row struct{ figure, verdict string }
	tests := []struct {
		name     string
		args     []string
		code     int
		verdicts []row
		not      []row
		want     []string
	}{
		{"vLLM's detailed file: latencies judged from its samples", []string{llmrunA, detailed, "--metric", "ttft_p50,tpot_p50,e2e_p50"}, -1,
			nil, []row{{"ttft_p50", "inconclusive (too few samples)"}, {"tpot_p50", "inconclusive (too few samples)"}, {"e2e_p50", "inconclusive (too few samples)"}},
			[]string{"vllm bench serve's result", "by vllm bench serve: their clients count and time requests each in their own way"}},
		{"vLLM's summary numbers: inconclusive, the reason said", []string{llmrunA, summaryOnly}, -1,
			[]row{{"ttft_p50", "inconclusive (too few samples)"}, {"tpot_p50", "inconclusive (too few samples)"}},
			nil, []string{"ttft_p50 inconclusive: too few samples: vllm bench serve saved this figure without its requests' samples (save them with --save-detailed): its noise cannot be bounded"}},
		{"SGLang's run without a count of failures: its success rate inconclusive", []string{llmrunA, sglang + "#1"}, -1,
			[]row{{"success_rate", "inconclusive (too few samples)"}, {"e2e_p99", "inconclusive (too few samples)"}},
			nil, []string{"(save them with --output-details)", "success_rate inconclusive: too few samples: sglang.bench_serving's result file has no such figure"}},
		{"SGLang's details: TTFT judged, the rest numbers only", []string{sglang + "#1", sglang + "#2", "--metric", "ttft_p50,tpot_p50"}, -1,
			[]row{{"tpot_p50", "inconclusive (too few samples)"}}, nil,
			[]string{"sglang.jsonl#2 (sglang.bench_serving's result, 160 requests)"}},
		{"a file of several runs wants #N", []string{llmrunA, sglang}, exitcode.Error, nil, nil, nil},
		{"one scenario of two mixed runs", []string{llmrunA, llmrunB, "--scenario", "rag"}, -1,
			[]row{{"request_throughput", ""}}, nil, []string{"scenario rag"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := command(t, "compare", tc.args...)
			if tc.code >= 0 && code != tc.code || tc.code < 0 && !judged(code) {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			for _, r := range tc.verdicts {
				if got := verdictOf(stdout, r.figure); r.verdict != "" && got != r.verdict || got == "" {
					t.Errorf("%s: verdict %q, want %q\n%s", r.figure, got, r.verdict, stdout)
				}
			}
			for _, r := range tc.not {
				if got := verdictOf(stdout, r.figure); got == r.verdict || got == "" {
					t.Errorf("%s: verdict %q\n%s", r.figure, got, stdout)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s\n%s", w, stdout, stderr)
				}
			}
		})
	}
	t.Run("the rag scenario's figures are its own", func(t *testing.T) {
		_, whole, _ := command(t, "compare", llmrunA, llmrunB, "--metric", "e2e_p50")
		_, rag, _ := command(t, "compare", llmrunA, llmrunB, "--metric", "e2e_p50", "--scenario", "rag")
		if w, r := cell(whole, "e2e_p50", 2), cell(rag, "e2e_p50", 2); w == "" || r == "" || w == r {
			t.Errorf("rag's e2e_p50 is the whole run's:\n%s\n%s", whole, rag)
		}
	})
	for _, tc := range []struct{ name, file, scenario, want string }{
		{"a scenario the file has not", llmrunA, "code", `has no scenario "code": it has chat, rag`},
		{"another tool's file has no scenarios", summaryOnly, "rag", "is a run of vllm bench serve, which has no scenarios"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := command(t, "compare", llmrunB, tc.file, "--scenario", tc.scenario)
			if code != exitcode.Error || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, tc.file) {
				t.Errorf("exit %d, stderr %q; want exit %d naming %s: %q\n%s", code, stderr, exitcode.Error, tc.file, tc.want, stdout)
			}
		})
	}
}

// cell is the i-th cell (from 1) of figure's row in a table.
func cell(stdout, figure string, i int) string {
	for line := range strings.SplitSeq(stdout, "\n") {
		cells := strings.Split(line, "│")
		if len(cells) > i && strings.HasPrefix(strings.TrimSpace(cells[1]), figure+" ") {
			return strings.TrimSpace(cells[i])
		}
	}
	return ""
}

// trend reads result files, llmrun's, vLLM's and SGLang's mixed, and
// judges the last against the median of those before it; report draws a
// page of vLLM's summary numbers.
func TestTrendAndReportOfForeignFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	llmrunRun := mixedRun(t, dir, "a")
	summaryOnly := filepath.Join(foreignData, "vllm-summary.json")
	sglang := filepath.Join(foreignData, "sglang.jsonl")
	code, stdout, stderr := command(t, "trend", sglang+"#1", summaryOnly, llmrunRun, "--metric", "ttft_p50,success_rate")
	if !judged(code) {
		t.Fatalf("trend: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"3 runs, newest first", "#1 " + sglang + "#1", "#3 " + llmrunRun} {
		if !strings.Contains(stdout, w) {
			t.Errorf("trend's output lacks %q:\n%s", w, stdout)
		}
	}
	if got := verdictOf(stdout, "ttft_p50"); got == "" || got == "no history" {
		t.Errorf("ttft_p50: verdict %q, want one against the two files before\n%s", got, stdout)
	}
	if code, _, stderr := command(t, "trend", summaryOnly, "--testid", "x"); code != exitcode.Usage || !strings.Contains(stderr, "--testid selects runs stored in InfluxDB, not result files") {
		t.Errorf("trend FILE --testid: exit %d, %s", code, stderr)
	}

	page := filepath.Join(dir, "vllm.html")
	if code, stdout, stderr := command(t, "report", "-o", page, summaryOnly); code != exitcode.OK {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, w := range []string{"vllm bench serve", "sim-model", "240 (234 ok, 6 failed)", "7.85 req/s", "178.0", "failed (vllm bench serve saves no class)"} {
		if !strings.Contains(html, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	for _, bad := range []string{"NaN", "No request completed", "No request failed"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page has %q", bad)
		}
	}

	// Each run of a file of several gets a page of its own by default.
	runs := filepath.Join(dir, "sglang.jsonl")
	if b, err := os.ReadFile(sglang); err != nil || os.WriteFile(runs, b, 0o600) != nil {
		t.Fatal("copying", sglang, err)
	}
	for _, n := range []string{"1", "2"} {
		want := filepath.Join(dir, "sglang-"+n+".html")
		if code, stdout, stderr := command(t, "report", runs+"#"+n); code != exitcode.OK || !strings.Contains(stdout, "wrote "+want) {
			t.Errorf("report %s#%s: exit %d, want it to write %s\n%s\n%s", runs, n, code, want, stdout, stderr)
		}
	}
}

// llmrun bench saves a run in vLLM's keys beside llmrun's result file:
// compare reads the two as the same run, each figure computed from its
// requests' samples equal in both.
func TestCompareBenchSavedResult(t *testing.T) {
	t.Parallel()
	url, _ := startCountedSim(t)
	dir := t.TempDir()
	export := filepath.Join(dir, "llmrun.json")
	code, stdout, stderr := command(t, "bench", "--base-url", url, "--backend", "vllm", "--num-prompts", "40",
		"--request-rate", "100", "--random-input-len", "32", "--random-output-len", "8",
		"--save-result", "--save-detailed", "--result-dir", filepath.Join(dir, "results"),
		"--no-preflight", "-q", "--summary-export", export)
	if code != exitcode.OK {
		t.Fatalf("bench: exit %d\n%s\n%s", code, stdout, stderr)
	}
	saved, err := filepath.Glob(filepath.Join(dir, "results", "*.json"))
	if err != nil || len(saved) != 1 {
		t.Fatalf("bench saved %v (%v), want one file", saved, err)
	}
	code, stdout, stderr = command(t, "compare", export, saved[0], "--metric", "ttft_mean,ttft_p50,tpot_p50,e2e_p90,success_rate")
	if !judged(code) {
		t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, figure := range []string{"ttft_mean", "ttft_p50", "tpot_p50", "e2e_p90", "success_rate"} {
		if base, cur := cell(stdout, figure, 2), cell(stdout, figure, 4); base == "" || base != cur || strings.Trim(cell(stdout, figure, 6), "+-") != "0.0 %" {
			t.Errorf("%s: llmrun's %q, vLLM's keys' %q; want the same\n%s", figure, base, cur, stdout)
		}
	}
	if !strings.Contains(stdout, "vllm bench serve's result") {
		t.Errorf("the saved file is not read as vLLM's:\n%s", stdout)
	}
}
