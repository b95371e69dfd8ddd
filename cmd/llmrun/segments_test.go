package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/summary"
)

// segmentedScript has a scenario of each kind the segments divide: shared
// iterations and a constant arrival rate with a number of iterations,
// whose arrivals wait for a VU (maxConcurrency) rather than being dropped
// when a loaded machine keeps the VUs busy.
const segmentedScript = `
import llm from 'llm';
export const options = {
  scenarios: {
    shared: { executor: 'shared-iterations', vus: 4, iterations: 20 },
    arrivals: { executor: 'constant-arrival-rate', rate: 40, duration: '20s', iterations: 31, preAllocatedVUs: 6, maxConcurrency: 6, arrival: 'poisson' },
  },
};
export function setup() {
  console.log('segment ' + __ENV.LLMRUN_EXECUTION_SEGMENT + ' of ' + __ENV.LLMRUN_EXECUTION_SEGMENT_SEQUENCE);
}
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 2, ignore_eos: true });
}
`

// Three llmrun processes, each running one segment of an uneven sequence
// against its own simulator, run the whole plan between them: their
// merged result has every iteration of it, and says which segments it
// was made of.
func TestSegmentsMergeIntoTheWholePlan(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "segmented.js", segmentedScript)
	dir := t.TempDir()
	segments := []string{"0:1/3", "1/3:1/2", "1/2:1"}
	files := make([]string, len(segments))
	var wg sync.WaitGroup
	for i, seg := range segments {
		files[i] = filepath.Join(dir, "part"+string(rune('a'+i))+".json")
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "run", "-q", "--seed", "7",
				"--execution-segment", seg, "--execution-segment-sequence", "0,1/3,1/2,1", "--summary-export", files[i], script)
			cmd.Env = append(os.Environ(), "NO_COLOR=1", asMainEnv+"=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("segment %s: %v\n%s", seg, err, out)
			}
			if want := "segment " + seg + " of 0,1/3,1/2,1"; !strings.Contains(string(out), want) {
				t.Errorf("segment %s: the script did not log %q from __ENV:\n%s", seg, want, out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	out := filepath.Join(dir, "all.json")
	if code, stdout, stderr := command(t, "merge", append(files, "-o", out)...); code != exitcode.OK {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	all, err := summary.ReadJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	if all.Serving.Requests != 51 || all.Serving.OK != 51 {
		t.Errorf("merged %d requests, %d ok: want the whole plan's 20 + 31", all.Serving.Requests, all.Serving.OK)
	}
	if want := "0:1/3, 1/3:1/2, 1/2:1"; all.Meta.ExecutionSegment != want || all.Meta.ExecutionSegmentSequence != "0,1/3,1/2,1" {
		t.Errorf("merged segments %q of %q, want %q of 0,1/3,1/2,1", all.Meta.ExecutionSegment, all.Meta.ExecutionSegmentSequence, want)
	}
	vus := map[string]int{}
	for _, sh := range all.Meta.LoadShape {
		vus[sh.Name] += sh.MaxVUs
	}
	if vus["shared"] != 4 {
		t.Errorf("merged shared-iterations VUs %d, want the whole plan's 4", vus["shared"])
	}
}

func TestSegmentFlags(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "segmented.js", segmentedScript)
	code, stdout, stderr := command(t, "inspect", "--seed", "1", "--execution-segment", "1/3:2/3", script)
	if code != exitcode.OK {
		t.Fatalf("inspect: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"execution segment 1/3:2/3 of 0,1/3,2/3,1", "7 iterations shared among 1 VU", "10 iterations at 40"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("inspect prints\n%s\nwant %q", stdout, want)
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--seed", "1", "--execution-segment", "2/3:1/3"}, "--execution-segment: \"2/3:1/3\": the start must be less than the end"},
		{[]string{"--seed", "1", "--execution-segment", "0:1/2", "--execution-segment-sequence", "0,1/3,1"}, "--execution-segment 0:1/2: segment 0:1/2 is not one of the sequence's segments"},
		{[]string{"--seed", "1", "--execution-segment", "0:1/2", "--execution-segment-sequence", "0,1/2,1/2"}, "--execution-segment-sequence: point 3 (1/2) is not greater than the one before it (1/2)"},
		{[]string{"--seed", "1", "--execution-segment-sequence", "0,1/2,1"}, "--execution-segment-sequence needs --execution-segment"},
		{[]string{"--execution-segment", "0:1/2"}, "--execution-segment needs --seed"},
	}
	for _, tc := range tests {
		code, _, stderr := command(t, "inspect", append(tc.args, script)...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("inspect %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitcode.Usage, tc.want)
		}
	}
}
