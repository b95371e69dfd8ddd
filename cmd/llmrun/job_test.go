package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/summary"
)

// These tests run llmrun processes as the pods of a Kubernetes Indexed
// Job run them: each is told its instance only by the environment the Job
// gives it (JOB_COMPLETION_INDEX, and LLMRUN_INSTANCES and
// LLMRUN_RENDEZVOUS as llmrun kube sets them), the rendezvous on
// 127.0.0.1.

// jobEnv is the environment of the pod of index i of a Job of n.
func jobEnv(i, n int, rendezvous string) []string {
	return []string{"JOB_COMPLETION_INDEX=" + strconv.Itoa(i), "LLMRUN_INSTANCES=" + strconv.Itoa(n), "LLMRUN_RENDEZVOUS=" + rendezvous}
}

// jobTest is what a test of a Job's instances needs: the script, a
// directory for their result files, and a context that bounds the test.
type jobTest struct {
	ctx    context.Context
	script string
	dir    string
}

func newJobTest(t *testing.T, script string) jobTest {
	t.Helper()
	j := jobTest{script: writeScript(t, "job.js", script), dir: t.TempDir()}
	// Registered after the directories, so run before their removal: a
	// test that fails ends its processes first.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	j.ctx = ctx
	return j
}

// result is the result file of instance i of a Job of n.
func (j jobTest) result(n, i int) string {
	return filepath.Join(j.dir, fmt.Sprintf("instance%d-of-%d.json", i, n))
}

// args are the arguments of instance i of a Job of n: extra, the shared
// seed, its result file and the script.
func (j jobTest) args(n, i int, extra ...string) []string {
	return append(slices.Clone(extra), "--seed", "7", "--summary-export", j.result(n, i), j.script)
}

// startJob starts n instances of llmrun run, as the pods of one Job, and
// returns them in index order; instance 0 is given port 0 and the others
// the port it says it listens at.
func startJob(t *testing.T, j jobTest, n int) []*instanceProcess {
	t.Helper()
	procs := []*instanceProcess{startInstance(t, j.ctx, jobEnv(0, n, "127.0.0.1:0"), j.args(n, 0)...)}
	addr := procs[0].await(t, j.ctx, listeningAt)[1]
	for i := 1; i < n; i++ {
		procs = append(procs, startInstance(t, j.ctx, jobEnv(i, n, addr), j.args(n, i)...))
	}
	return procs
}

// waitAll waits for every process and fails the test unless each exits 0.
func waitAll(t *testing.T, procs ...*instanceProcess) {
	t.Helper()
	for i, p := range procs {
		if code, stderr := p.wait(); code != exitcode.OK {
			t.Fatalf("process %d exited %d:\n%s", i, code, stderr)
		}
	}
}

// everyExecutorScript has one short scenario of every executor, with
// counts that 3 and 5 mostly divide unevenly. vus_<scenario>
// counts the VUs that ran an iteration of each scenario.
const everyExecutorScript = `
import llm from 'llm';
import { Counter } from 'metrics';
const names = ['cvus', 'rvus', 'shared', 'pervu', 'car', 'carn', 'rar'];
const used = {};
for (const n of names) used[n] = new Counter('vus_' + n);
const seen = {};
function iteration(name) {
  if (!seen[name]) { seen[name] = true; used[name].add(1); }
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 2, ignore_eos: true });
}
export const options = {
  scenarios: {
    cvus: { executor: 'constant-vus', exec: 'cvus', vus: 7, duration: '1500ms' },
    rvus: { executor: 'ramping-vus', exec: 'rvus', startVUs: 1,
            stages: [{ duration: '500ms', target: 8 }, { duration: '1s', target: 8 }, { duration: '500ms', target: 2 }] },
    shared: { executor: 'shared-iterations', exec: 'shared', vus: 5, iterations: 23 },
    pervu: { executor: 'per-vu-iterations', exec: 'pervu', vus: 7, iterations: 2 },
    car: { executor: 'constant-arrival-rate', exec: 'car', rate: 25, duration: '2s', arrival: 'poisson', preAllocatedVUs: 5, maxVUs: 8 },
    carn: { executor: 'constant-arrival-rate', exec: 'carn', rate: 40, iterations: 19, duration: '1m', arrival: 'gamma', burstiness: 0.5,
            preAllocatedVUs: 5, maxVUs: 7 },
    rar: { executor: 'ramping-arrival-rate', exec: 'rar', startRate: 5, arrival: 'poisson', preAllocatedVUs: 5, maxVUs: 11,
           stages: [{ duration: '1s', target: 40 }, { duration: '1s', target: 10 }] },
  },
};
export function cvus() { iteration('cvus'); }
export function rvus() { iteration('rvus'); }
export function shared() { iteration('shared'); }
export function pervu() { iteration('pervu'); }
export function car() { iteration('car'); }
export function carn() { iteration('carn'); }
export function rar() { iteration('rar'); }
`

// scenarioCounts is what the test compares of one scenario: iterations,
// arrivals (iterations and dropped ones), the load shape's max VUs and
// the VUs that ran an iteration.
type scenarioCounts struct {
	iterations, arrivals, usedVUs int64
	maxVUs                        int
}

// countsByScenario reads a result's counts of each scenario.
func countsByScenario(s *summary.Summary) map[string]scenarioCounts {
	counts := map[string]scenarioCounts{}
	for _, sc := range s.Scenarios {
		c := counts[sc.Name]
		c.iterations, c.arrivals = sc.Serving.Iterations, sc.Serving.Iterations+sc.Serving.DroppedIterations
		counts[sc.Name] = c
	}
	for _, sh := range s.Meta.LoadShape {
		c := counts[sh.Name]
		c.maxVUs = sh.MaxVUs
		c.usedVUs = int64(s.Metrics["vus_"+sh.Name].Values["count"])
		counts[sh.Name] = c
	}
	return counts
}

// N processes given only a Job's environment run one plan split N ways:
// merged, each scenario's counts are those of the same plan run as one
// process with the same seed, and those the plan fixes are its own. The
// arrival-rate scenarios draw Poisson and gamma arrivals from the seed, so
// their count is known only from the unsplit run.
func TestJobSplitsEveryExecutorExactly(t *testing.T) {
	t.Parallel()
	j := newJobTest(t, everyExecutorScript)
	// The whole plan is instance 0 of 1.
	wholeRun := startInstance(t, j.ctx, nil, j.args(1, 0)...)
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d instances", n), func(t *testing.T) {
			procs := startJob(t, j, n)
			waitAll(t, procs...)
			waitAll(t, wholeRun)
			files := make([]string, n)
			for i := range files {
				files[i] = j.result(n, i)
			}
			merged, err := readMerged(t, files...)
			if err != nil {
				t.Fatalf("the instances' results do not merge: %v", err)
			}
			all := readSummary(t, merged)
			if all.Meta.Instances != n || all.Meta.MissingInstances != nil {
				t.Errorf("merged: %d instances, missing %v; want %d, none", all.Meta.Instances, all.Meta.MissingInstances, n)
			}
			got, whole := countsByScenario(all), countsByScenario(readSummary(t, j.result(1, 0)))
			// What the plan fixes of each scenario; 0 where it does not.
			// Iterations and dropped ones are counted by the plan, not by
			// time, in all but the constant and ramping VUs.
			plan := map[string]struct {
				scenarioCounts
				counted bool
			}{
				"cvus":   {scenarioCounts{maxVUs: 7, usedVUs: 7}, false},
				"rvus":   {scenarioCounts{maxVUs: 8, usedVUs: 8}, false},
				"shared": {scenarioCounts{iterations: 23, arrivals: 23, maxVUs: 5}, true},
				"pervu":  {scenarioCounts{iterations: 14, arrivals: 14, maxVUs: 7, usedVUs: 7}, true},
				"car":    {scenarioCounts{maxVUs: 8}, true},
				"carn":   {scenarioCounts{arrivals: 19, maxVUs: 7}, true},
				"rar":    {scenarioCounts{maxVUs: 11}, true},
			}
			for name, want := range plan {
				g, w := got[name], whole[name]
				t.Logf("%s: split %d ways %+v, whole %+v", name, n, g, w)
				if g.maxVUs != w.maxVUs || g.maxVUs != want.maxVUs {
					t.Errorf("%s: max VUs %d split %d ways, %d whole; want the plan's %d", name, g.maxVUs, n, w.maxVUs, want.maxVUs)
				}
				if want.counted && (g.arrivals != w.arrivals || g.arrivals == 0 || (want.arrivals != 0 && g.arrivals != want.arrivals)) {
					t.Errorf("%s: %d iterations and dropped split %d ways, %d whole; want them equal (and the plan's %d when it fixes them)", name, g.arrivals, n, w.arrivals, want.arrivals)
				}
				if want.iterations != 0 && (g.iterations != want.iterations || w.iterations != want.iterations) {
					t.Errorf("%s: %d iterations split %d ways, %d whole; want the plan's %d", name, g.iterations, n, w.iterations, want.iterations)
				}
				if want.usedVUs != 0 && (g.usedVUs != want.usedVUs || w.usedVUs != want.usedVUs) {
					t.Errorf("%s: %d VUs ran an iteration split %d ways, %d whole; want the plan's %d", name, g.usedVUs, n, w.usedVUs, want.usedVUs)
				}
			}
			if len(got) != len(plan) {
				t.Errorf("merged scenarios %v, want the plan's %d", slices.Sorted(maps.Keys(got)), len(plan))
			}
		})
	}
}

// jobScript says on stderr when setup() has run and when each VU starts
// its first iteration; 3 VUs loop for 3 s in all, shared among the
// instances.
const jobScript = `
import llm from 'llm';
let started = false;
export const options = { vus: 3, duration: '3s' };
export function setup() { console.log('set up'); }
export default function () {
  if (!started) { started = true; console.log('first iteration'); }
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 2, ignore_eos: true });
}
`

var (
	setUp          = regexp.MustCompile(`set up`)
	firstIteration = regexp.MustCompile(`first iteration`)
)

// An instance started only once the others have arrived and run setup(),
// and so wait at the rendezvous, still starts together with them: one run
// id and one start, after it was started.
func TestJobLateInstanceStartsWithTheOthers(t *testing.T) {
	t.Parallel()
	j := newJobTest(t, jobScript)
	args := func(i int) []string { return j.args(3, i, "--rendezvous-timeout", "1m") }
	procs := []*instanceProcess{startInstance(t, j.ctx, jobEnv(0, 3, "127.0.0.1:0"), args(0)...)}
	addr := procs[0].await(t, j.ctx, listeningAt)[1]
	procs = append(procs, startInstance(t, j.ctx, jobEnv(1, 3, addr), args(1)...))
	for _, p := range procs {
		p.await(t, j.ctx, setUp)
	}
	late := time.Now()
	procs = append(procs, startInstance(t, j.ctx, jobEnv(2, 3, addr), args(2)...))
	waitAll(t, procs...)
	first := readSummary(t, j.result(3, 0))
	if !first.Meta.Start.After(late) {
		t.Errorf("the run started at %v, before the late instance was started at %v", first.Meta.Start, late)
	}
	for i := range procs {
		s := readSummary(t, j.result(3, i))
		if s.Meta.RunID != first.Meta.RunID || !s.Meta.Start.Equal(first.Meta.Start) || s.Serving.Iterations == 0 {
			t.Errorf("instance %d: run %q started %v, %d iterations; want instance 0's run %q started %v, and iterations",
				i, s.Meta.RunID, s.Meta.Start, s.Serving.Iterations, first.Meta.RunID, first.Meta.Start)
		}
	}
}

// An instance killed once it runs load does not stop the others: they end
// normally, and the merge of their results names the lost one.
func TestJobLostInstanceIsNamedInTheMerge(t *testing.T) {
	t.Parallel()
	j := newJobTest(t, jobScript)
	procs := startJob(t, j, 3)
	lost := procs[1]
	lost.await(t, j.ctx, firstIteration)
	if err := lost.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code, stderr := lost.wait(); code != -1 {
		t.Fatalf("instance 1, killed, exited %d:\n%s", code, stderr)
	}
	waitAll(t, procs[0], procs[2])
	out := filepath.Join(j.dir, "merged.json")
	code, _, stderr := command(t, "merge", "-o", out, j.result(3, 0), j.result(3, 2))
	if code != exitcode.OK || !strings.Contains(stderr, "no result of instance 1 was given") {
		t.Errorf("merging the survivors: exit %d, stderr %q; want a warning naming instance 1", code, stderr)
	}
	m := readSummary(t, out)
	if m.Meta.Instances != 3 || !slices.Equal(m.Meta.MissingInstances, []int{1}) || m.Serving.Iterations == 0 {
		t.Errorf("merged: %d instances, missing %v, %d iterations; want 3, [1] and the survivors' iterations", m.Meta.Instances, m.Meta.MissingInstances, m.Serving.Iterations)
	}
}
