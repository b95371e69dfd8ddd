package results

import (
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/report"
	"github.com/llmrun/llmrun/runtime/summary"
)

// CrossReport.Write writes one page of the runs, each treatment judged
// against the baseline, saying when a treatment ran another script.
func TestCrossReportWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, same, other := writeResult(t, dir, "base", "abc", 100), writeResult(t, dir, "same", "abc", 100), writeResult(t, dir, "other", "def", 300)
	out := filepath.Join(dir, "cross.html")
	if err := (CrossReport{In: []string{base, same, other}, Labels: []string{"", "the same"}, Baseline: same, GPUs: []int{2}, Out: out}).Write(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(b))
	for _, want := range []string{
		"llmrun report: 3 runs against the same",
		`<th class="num baseline">the same<br>`,
		`<th class="num">base<br>`,
		"other: ran another script than the baseline",
		"ttft_p99 (ms)",
		"regression", // other's TTFT, three times the baseline's
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(page)
	}
}

func TestCrossReportErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := writeResult(t, dir, "a", "abc", 100), writeResult(t, dir, "b", "abc", 100)
	notJSON := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJSON, []byte("not a result"), 0o644); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "copied.json")
	if b, err := os.ReadFile(a); err != nil || os.WriteFile(copied, b, 0o600) != nil {
		t.Fatal("copying", a, err)
	}
	out := filepath.Join(dir, "cross.html")
	for _, tc := range []struct {
		name string
		r    CrossReport
		want string
	}{
		{"one file", CrossReport{In: []string{a}, Out: out}, "two result files or more, up to 50, not 1"},
		{"too many files", CrossReport{In: slices.Repeat([]string{a}, MaxCrossRuns+1), Out: out}, "two result files or more, up to 50, not 51"},
		{"one file under two paths", CrossReport{In: []string{a, dir + "/./a.json"}, Out: out}, a + " and " + dir + "/./a.json are one result file: give it once"},
		{"one file twice", CrossReport{In: []string{a, b, a}, Out: out}, a + " given twice"},
		{"one run copied", CrossReport{In: []string{a, b, copied}, Out: out}, a + " and " + copied + " hold the same run (run_id a)"},
		{"too many labels", CrossReport{In: []string{a, b}, Labels: []string{"x", "y", "z"}, Out: out}, "--label given 3 times for 2 result files"},
		{"no GPU", CrossReport{In: []string{a, b}, GPUs: []int{-1}, Out: out}, "--gpus -1: want 1 GPU or more"},
		{"no GPU for one run", CrossReport{In: []string{a, b}, GPUs: []int{2, 0}, Out: out}, "--gpus 0: want 1 GPU or more"},
		{"a GPU count too many", CrossReport{In: []string{a, b}, GPUs: []int{2, 4, 8}, Out: out}, "--gpus given 3 times for 2 result files"},
		{"baseline not given", CrossReport{In: []string{a, b}, Baseline: "c.json", Out: out}, "--baseline c.json: not one of the result files given"},
		{"same label", CrossReport{In: []string{a, b}, Labels: []string{"x", "x"}, Out: out}, "--label x given twice"},
		{"a label that is another run's name", CrossReport{In: []string{a, b}, Labels: []string{"", "a"}, Out: out}, `are both labelled "a"`},
		{"not a result", CrossReport{In: []string{a, notJSON}, Out: out}, "notes.txt:1:2: not valid JSON"},
		{"unwritable -o", CrossReport{In: []string{a, b}, Out: filepath.Join(dir, "no", "x.html")}, "cannot write there"},
	} {
		if err := tc.r.Write(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed report left a file (%v)", err)
	}
}

// A run is named by its label tag, else its test id, else its file's
// name; runs that would share a name get their file's, or their path
// when the files share a name too.
func TestRunLabels(t *testing.T) {
	run := func(testid string, tags map[string]string) report.CrossRunInput {
		return report.CrossRunInput{Summary: &summary.Summary{Meta: summary.Meta{TestID: testid, Tags: tags}}}
	}
	for _, tc := range []struct {
		name  string
		files []string
		runs  []report.CrossRunInput
		want  []string
	}{
		{"label tag, test id, file", []string{"a.json", "b.json", "dir/c.json"},
			[]report.CrossRunInput{run("t1", map[string]string{"label": "tp4"}), run("t2", nil), run("", nil)}, []string{"tp4", "t2", "c"}},
		{"a shared test id", []string{"x/a.json", "y/b.json"}, []report.CrossRunInput{run("nightly", nil), run("nightly", nil)}, []string{"a", "b"}},
		{"a shared file name", []string{"x/result.json", "y/result.json"}, []report.CrossRunInput{run("", nil), run("", nil)}, []string{"x/result.json", "y/result.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runLabels(tc.files, tc.runs); !slices.Equal(got, tc.want) {
				t.Errorf("labels %q, want %q", got, tc.want)
			}
		})
	}
}

// A cross-run page draws another tool's saved run beside llmrun's, as
// compare and a single-run report read it, and takes the baseline under
// another path to the same file.
func TestCrossReportOfAnotherTool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	own := writeResult(t, dir, "own", "abc", 100)
	vllm := filepath.Join(foreignDir, "vllm-detailed.json")
	out := filepath.Join(dir, "cross.html")
	if err := (CrossReport{In: []string{own, vllm}, Baseline: dir + "/./own.json", Out: out}).Write(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(b))
	for _, want := range []string{"llmrun report: 2 runs against own", `<th class="num">vllm-detailed<br>`, vllm,
		"vllm-detailed: measured by vllm bench serve, the baseline by llmrun: their clients count and time requests each in their own way"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "ran another script") {
		t.Error("the page says another tool's run ran another script")
	}
	if t.Failed() {
		t.Log(page)
	}
}
