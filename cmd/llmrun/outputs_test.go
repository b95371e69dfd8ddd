package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// resultStart is when the result files the tests make by hand start.
var resultStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// failingThresholdScript is chatScript with a threshold no run meets.
const failingThresholdScript = `
import llm from 'llm';
export const options = { thresholds: { llm_e2e: ['max<0'] } };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Say something.' }], max_tokens: 4, ignore_eos: true, temperature: 0 });
}
`

// An output that loses records (a full disk) fails the run with exit 1,
// above a failed threshold, and the summary and stderr say which output
// lost what; the other outputs are written whole. (A result file on
// /dev/full is refused at start: TestDeviceThatRefusesWrites.)
func TestLostOutputExitsOne(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	export := filepath.Join(dir, "r.json")
	script := writeScript(t, "chat.js", failingThresholdScript)
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", "-u", "2", "-i", "20",
		"--out", "jsonl=/dev/full", "--summary-export", export, script)
	if code != exitcode.Error {
		t.Fatalf("exit %d, want %d (an output lost records, which wins over a failed threshold)\n%s\n%s", code, exitcode.Error, stdout, stderr)
	}
	if !strings.Contains(stdout, "WARNING: jsonl /dev/full: 0 points written, 20 dropped") ||
		!strings.Contains(stderr, "output jsonl /dev/full lost data: 0 written, 20 dropped") {
		t.Errorf("the summary or stderr does not name the loss:\n%s\n%s", stdout, stderr)
	}
	if s := readSummary(t, export); len(s.Outputs) != 1 || s.Outputs[0].Dropped != 20 {
		t.Errorf("result file's outputs %+v", s.Outputs)
	}
}

// A lost output and a handleSummary that throws: the script error (107)
// wins, as the exit codes' precedence in docs/cli.md says; each is still reported.
func TestHandleSummaryErrorWinsOverALostOutput(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	script := writeScript(t, "hs.js", `
import llm from 'llm';
export const options = { vus: 1, iterations: 2 };
export default function () { llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }); }
export function handleSummary() { throw new Error('no summary today'); }`)
	code, _, stderr := cli(t, context.Background(), nil, "run", "-q", "--seed", "1", "--out", "jsonl=/dev/full", script)
	if code != exitcode.ScriptError || !strings.Contains(stderr, "no summary today") || !strings.Contains(stderr, "output jsonl /dev/full lost data") {
		t.Errorf("exit %d, want %d with both failures reported\n%s", code, exitcode.ScriptError, stderr)
	}
}

// InfluxDB failing after the run's first point is counted as points
// dropped, and the run exits 1.
func TestInfluxDBDyingMidRunExitsOne(t *testing.T) {
	t.Parallel()
	var writes atomic.Int64
	db := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if writes.Add(1) == 1 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.Error(w, "the server is going away", http.StatusInternalServerError)
	}))
	defer db.Close()
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 4))
	env := map[string]string{"LLMRUN_INFLUXDB_TOKEN": "t"}
	code, stdout, stderr := cli(t, context.Background(), env, "run", "--no-color", "-u", "2", "-i", "10",
		"--out", "influxdb="+db.URL+"?bucket=b&flushTimeout=2s", script)
	if code != exitcode.Error || !strings.Contains(stdout, "1 point written") || !strings.Contains(stderr, "lost data: 1 written") {
		t.Errorf("exit %d, want %d with the points dropped\n%s\n%s", code, exitcode.Error, stdout, stderr)
	}
}

// Two outputs naming one file are a bad command line, whatever their kind
// and however the file is named.
func TestOutputsSharingAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 2))
	same := filepath.Join(dir, "same.out")
	link := filepath.Join(dir, "link.out")
	if err := os.WriteFile(same, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(same, link); err != nil {
		t.Fatal(err)
	}
	notYet := filepath.Join(dir, "not-yet.jsonl")
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink("not-yet.jsonl", dangling); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--out", "jsonl=" + same, "--out", "csv=" + same}, "--out jsonl=" + same + " and --out csv=" + same + " are the same file"},
		{[]string{"--summary-export", same, "--out", "html=" + dir + "/./same.out"}, "--summary-export " + same + " and --out html="},
		{[]string{"--summary-export", same, "--out", "json=" + link}, "are the same file"},
		{[]string{"--out", "jsonl=" + notYet, "--summary-export", dangling}, "--summary-export " + dangling + " and --out jsonl=" + notYet + " are the same file, " + notYet + ":"},
	} {
		args := append(append([]string{"run", "-q", "-i", "1"}, tc.flags...), script)
		code, _, stderr := cli(t, context.Background(), nil, args...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s; want %d and %q", tc.flags, code, stderr, exitcode.Usage, tc.want)
		}
	}
}

// A device that opens but refuses every write (/dev/full, as a full
// disk does): a result file there is refused before any request, as it
// would be lost at the end; a records file there is told at its first
// write, and the run's other outputs and its result are still written,
// with exit 1 for the records lost.
func TestDeviceThatRefusesWrites(t *testing.T) {
	t.Parallel()
	const full = "/dev/full"
	if f, err := os.OpenFile(full, os.O_WRONLY, 0); err != nil {
		t.Skipf("no %s: %v", full, err)
	} else {
		f.Close()
	}
	dir := t.TempDir()
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 2))
	for _, flag := range []string{"--summary-export", "--out json=", "--out html="} {
		name, value, _ := strings.Cut(flag, " ")
		code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-i", "1", name, value+full, script)
		want := strings.TrimSuffix(flag, " ")
		if !strings.HasSuffix(flag, "=") {
			want += " "
		}
		want += full + ": cannot write there: it is a device other than /dev/null or a terminal"
		if code != exitcode.Error || !strings.Contains(stderr, want) || strings.Contains(stdout, "requests") {
			t.Errorf("%s%s: exit %d, stdout %q, stderr %q; want %d before the run and %q", flag, full, code, stdout, stderr, exitcode.Error, want)
		}
	}
	result, csv := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	code, _, stderr := cli(t, context.Background(), nil, "run", "-q", "-i", "5", "--out", "jsonl="+full, "--out", "csv="+csv,
		"--summary-export", result, script)
	told := "llmrun run: output jsonl /dev/full: write error: write /dev/full: no space left on device; its later records are dropped and counted, the run goes on"
	if code != exitcode.Error || !strings.Contains(stderr, told) || !strings.Contains(stderr, "output jsonl /dev/full lost data: 0 written, 5 dropped") {
		t.Errorf("exit %d, stderr %q; want %d, the write error told and the loss counted", code, stderr, exitcode.Error)
	}
	if b, err := os.ReadFile(csv); err != nil || strings.Count(string(b), "\n") != 6 {
		t.Errorf("%s: %v, %q; want a header and 5 records", csv, err, b)
	}
	var doc struct {
		Outputs []struct {
			Output  string `json:"output"`
			Dropped int    `json:"dropped"`
		} `json:"outputs"`
	}
	if b, err := os.ReadFile(result); err != nil || json.Unmarshal(b, &doc) != nil || len(doc.Outputs) != 2 {
		t.Errorf("%s: %v, %+v; want the result with both outputs' reports", result, err, doc)
	}
}

// A file output whose directory is missing or not writable, or whose path
// is a directory, fails before the run, with one message and exit 1 for
// every kind of file output.
func TestUnwritableOutputPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 2))
	for _, bad := range []struct{ path, why string }{
		{"/proc/nope/x.out", "cannot write there: directory /proc/nope does not exist"},
		{"/proc/x.out", "cannot write there: directory /proc is not writable"},
		{dir, "cannot write there: it is a directory"},
	} {
		for _, flag := range []string{"--out jsonl=", "--out csv=", "--out html=", "--out json=", "--summary-export "} {
			name, value, _ := strings.Cut(flag, " ")
			code, _, stderr := cli(t, context.Background(), nil, "run", "-q", "-i", "1", name, value+bad.path, script)
			want := strings.TrimSuffix(flag, " ")
			if !strings.HasSuffix(flag, "=") {
				want += " "
			}
			want += bad.path + ": " + bad.why
			if code != exitcode.Error || !strings.Contains(stderr, want) {
				t.Errorf("%s%s: exit %d, %s; want %d and %q", flag, bad.path, code, stderr, exitcode.Error, want)
			}
		}
	}
}

// editResult writes a copy of the result file at path, named name in dir,
// with its JSON text edited by replacing old with new.
func editResult(t *testing.T, path, dir, name, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", path, old)
	}
	out := filepath.Join(dir, name)
	if err := os.WriteFile(out, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// merge, compare and report refuse a result file whose sections, times or
// counts cannot be right, naming the file and the field, and a file that
// is not a regular one (a link to /dev/zero) at once.
func TestResultReadersRefuseBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := plantedResult(t, dir, "good", 1, 20, 100, 10*time.Second, nil)
	other := plantedResult(t, dir, "other", 2, 20, 100, 10*time.Second, nil)
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ file, want string }{
		{editResult(t, other, dir, "null.json", `"serving": {`, `"serving": null, "x": {`), "null.json: serving: missing"},
		{editResult(t, other, dir, "nostart.json", `"start":`, `"x":`), "nostart.json: meta.start: missing"},
		{editResult(t, other, dir, "huge.json", `"requests": 20`, `"requests": 9223372036854775807`), "huge.json: serving.requests: 9223372036854775807, want a count from 0 to"},
		{editResult(t, other, dir, "type.json", `"requests": 20`, `"requests": [20]`), "serving.requests: want a whole number, got array"},
		{zero, "cannot read result file " + zero + ": not a regular file (a device)"},
	}
	for _, b := range bad {
		for _, args := range [][]string{{"merge", good, b.file}, {"compare", good, b.file}, {"report", b.file, "-o", filepath.Join(dir, "r.html")}} {
			code, _, stderr := command(t, args[0], args[1:]...)
			if code != exitcode.Error || !strings.Contains(stderr, b.want) || strings.Contains(stderr, "Go ") {
				t.Errorf("%v: exit %d, %s; want %d and %q", args, code, stderr, exitcode.Error, b.want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); !os.IsNotExist(err) {
		t.Errorf("report of a bad file left a page: %v", err)
	}
}

// merge -o and report -o check where they write before reading, and
// write whole or not at all.
func TestMergeAndReportOutputPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := plantedResult(t, dir, "a", 1, 20, 100, 10*time.Second, nil)
	b := plantedResult(t, dir, "b", 2, 20, 100, 10*time.Second, nil)
	for _, args := range [][]string{{"merge", a, b, "-o", "/proc/nope/m.json"}, {"report", a, "-o", "/proc/nope/m.html"}} {
		code, _, stderr := command(t, args[0], args[1:]...)
		if code != exitcode.Error || !strings.Contains(stderr, "-o /proc/nope/m.") || !strings.Contains(stderr, "cannot write there: directory /proc/nope does not exist") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	merged := filepath.Join(dir, "m.json")
	if code, _, stderr := command(t, "merge", a, b, "-o", merged); code != exitcode.OK {
		t.Fatalf("merge: exit %d, %s", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("files in the directory after merge -o: %v, want a, b and m", entries)
	}
}

// A real InfluxDB killed while the run goes (at the LLM server's fifth
// request): the points it did not take are counted as dropped, and the run
// exits 1.
func TestRealInfluxDBKilledMidRunExitsOne(t *testing.T) {
	t.Parallel()
	db := influxtest.Start(t)
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	llmServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") && requests.Add(1) == 5 {
			db.Stop()
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	defer llmServer.Close()
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 4))
	export := filepath.Join(t.TempDir(), "r.json")
	env := map[string]string{"LLMRUN_INFLUXDB_TOKEN": db.Token}
	code, stdout, stderr := cli(t, context.Background(), env, "run", "--no-color", "-u", "1", "-i", "20", "--base-url", llmServer.URL+"/v1",
		"--out", "influxdb="+db.URL+"?bucket="+db.Bucket+"&flushTimeout=2s", "--summary-export", export, script)
	if code != exitcode.Error || !strings.Contains(stderr, "lost data") {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.Error, stdout, stderr)
	}
	if s := readSummary(t, export); len(s.Outputs) != 1 || s.Outputs[0].Dropped == 0 || s.Serving.OK != 20 {
		t.Errorf("outputs %+v, %d requests ok; want points dropped and 20 ok", s.Outputs, s.Serving.OK)
	}
}
