package runner_test

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/rendezvous"
	"github.com/llmrun/llmrun/runtime/runner"
)

// nine is a plan of 9 iterations shared by 3 VUs, one request each.
const nine = "export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 3, iterations: 9 } } };\n" + stream

// runInstances runs script as n instances of one run meeting at a
// rendezvous on 127.0.0.1, each with edit's changes, and returns their
// results by index.
func runInstances(t *testing.T, n int, script string, edit func(*runner.Config)) []result {
	t.Helper()
	results := make([]result, n)
	listening := make(chan string, 1)
	var wg sync.WaitGroup
	firstEnded := make(chan struct{})
	start := func(i int, addr string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				defer close(firstEnded)
			}
			results[i] = run(t, script, func(c *runner.Config) {
				c.Rendezvous = &rendezvous.Config{Instances: n, Instance: i, Address: addr,
					Listening: func(a net.Addr) { listening <- a.String() }}
				if edit != nil {
					edit(c)
				}
			})
		}()
	}
	start(0, "127.0.0.1:0")
	select {
	case addr := <-listening:
		for i := 1; i < n; i++ {
			start(i, addr)
		}
	case <-firstEnded: // instance 0 failed before it listened: no other starts
	}
	wg.Wait()
	return results
}

// runner.Run with Rendezvous{Instances: 3} runs the instance's share of
// the plan, as llmrun run --instances 3 does: a third of its iterations
// each, told in __ENV, not three copies of the whole plan.
func TestRunInstancesShareThePlan(t *testing.T) {
	const told = "export function setup() { console.log(`${__ENV.LLMRUN_INSTANCE} of ${__ENV.LLMRUN_INSTANCES}: ${__ENV.LLMRUN_EXECUTION_SEGMENT}`); }\n"
	var logs [3]strings.Builder
	results := runInstances(t, 3, nine+told, func(c *runner.Config) {
		c.Engine.Logger = slog.New(slog.NewTextHandler(&logs[c.Rendezvous.Instance], nil))
	})
	for i, r := range results {
		o := r.outcome
		if o.Verdict != runner.Passed || o.Summary == nil {
			t.Fatalf("instance %d: outcome %+v\n%s", i, o, r.stderr)
		}
		if got := o.Summary.Serving.Requests; got != 3 {
			t.Errorf("instance %d sent %d requests, want its third of the plan's 9", i, got)
		}
		if want := fmt.Sprintf("%d of 3: %s", i, []string{"0:1/3", "1/3:2/3", "2/3:1"}[i]); !strings.Contains(logs[i].String(), want) {
			t.Errorf("instance %d's script was told %q, want %q", i, logs[i].String(), want)
		}
	}
}

// A run of instances needs a seed given, the same in every instance, to
// split the plan: runner.Run refuses a drawn one, as llmrun run does.
func TestRunInstancesNeedAGivenSeed(t *testing.T) {
	r := run(t, nine, func(c *runner.Config) {
		c.SeedDrawn = true
		c.Rendezvous = &rendezvous.Config{Instances: 3, Instance: 1, Address: "127.0.0.1:1", Timeout: time.Second}
	})
	if r.outcome.Verdict != runner.InvalidConfig || !strings.Contains(r.stderr, "--instances 3 needs --seed") {
		t.Errorf("verdict %v, stderr:\n%s\nwant invalid config and the seed asked for", r.outcome.Verdict, r.stderr)
	}
}
