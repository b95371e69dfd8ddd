package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
)

// threeInstancesScript sends 3 short requests a second in all, shared by
// the instances, for at most two minutes: the test interrupts it sooner.
const threeInstancesScript = `
import llm from 'llm';
export const options = { scenarios: { chat: { executor: 'constant-arrival-rate', rate: 6, timeUnit: '1s', duration: '2m', preAllocatedVUs: 3 } } };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4 });
}
`

// A run of 3 instances on the built-in simulator, instance 0 with a
// dashboard: its page shows the three instances live, and once instance
// 2 is killed (SIGKILL) names it lost ("instance 2 lost at …: connection
// closed") while the pooled figures still count every request the three
// reported, instance 2's until it died. Once instance 0 is gone too,
// instance 1 says once that its figures no longer reach it, and runs on.
// The screenshot is kept to be looked at (copied to
// /tmp/dash-instances.png when LLMRUN_KEEP_SCREENSHOTS is set).
func TestDashboardOfThreeInstancesNamesOneKilledInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	script := writeScript(t, "three.js", threeInstancesScript)
	args := func(i int, addr string) []string {
		return []string{"--no-preflight", "--no-color", "--instances", "3", "--instance", strconv.Itoa(i), "--rendezvous", addr, "--seed", "7", script}
	}

	// Instance 0 is not quiet: its banner, on stdout, names the page.
	cmd0 := exec.CommandContext(ctx, llmrunBinary(t), append([]string{"run", "--dashboard=127.0.0.1:0", "--dashboard-period=200ms"}, args(0, "127.0.0.1:0")...)...)
	cmd0.Env = append(os.Environ(), asMainEnv+"=1")
	stdout, err := cmd0.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	page := make(chan string, 1)
	p0 := startProcess(t, cmd0)
	go func() {
		banner := regexp.MustCompile(`output: +dashboard (http://\S+/)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := banner.FindStringSubmatch(sc.Text()); m != nil {
				page <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	addr := p0.await(t, ctx, listeningAt)[1]
	p1 := startInstance(t, ctx, nil, args(1, addr)...)
	p2 := startInstance(t, ctx, nil, args(2, addr)...)
	var url string
	select {
	case url = <-page:
	case <-ctx.Done():
		t.Fatalf("instance 0's banner named no dashboard:\n%s", p0.output())
	}

	// The test follows the events itself, from the first, rather than
	// sleep.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewScanner(resp.Body)
	stream.Buffer(nil, dashboard.MaxEventSize+64)
	var pooled int64
	// until reads events until one satisfies cond, and returns it.
	until := func(what string, cond func(dashboard.Event) bool) dashboard.Event {
		t.Helper()
		for stream.Scan() {
			data, ok := strings.CutPrefix(stream.Text(), "data: ")
			if !ok {
				continue
			}
			var ev dashboard.Event
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
			pooled += ev.All.Requests
			if cond(ev) {
				return ev
			}
		}
		t.Fatalf("the events ended before %s: %v\ninstance 0:\n%s", what, stream.Err(), p0.output())
		return dashboard.Event{}
	}
	heardAll := until("every instance reported requests", func(ev dashboard.Event) bool {
		if len(ev.Instances) != 3 {
			return false
		}
		for _, in := range ev.Instances {
			if in.State != dashboard.InstanceRunning || in.Requests == 0 {
				return false
			}
		}
		return true
	})
	t.Logf("all three heard at %.1f s: %+v", heardAll.Elapsed, heardAll.Instances)
	if err := p2.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	lost := until("instance 2 was named lost", func(ev dashboard.Event) bool { return ev.Instances[2].State == dashboard.InstanceLost })
	in2 := lost.Instances[2]
	if in2.Lost != "connection closed" || in2.LostAt < heardAll.Elapsed-1 || in2.Requests < heardAll.Instances[2].Requests {
		t.Errorf("instance 2 %+v, want lost after %.1f s for its connection closed, its %d requests or more kept", in2, heardAll.Elapsed, heardAll.Instances[2].Requests)
	}
	var counted int64
	for _, in := range lost.Instances {
		counted += in.Requests
	}
	if pooled != counted || lost.Instances[1].State != dashboard.InstanceRunning {
		t.Errorf("the events' pooled figures counted %d requests, the instances %d (%+v); want the same, instance 1 running", pooled, counted, lost.Instances)
	}

	dom := string(browsertest.Run(t, bin, url, "--dump-dom"))
	lostLine := regexp.MustCompile(`instance 2 lost at \d+m\d\ds: connection closed`)
	if !lostLine.MatchString(dom) || strings.Count(dom, `<tr class="lost"`) != 1 {
		t.Errorf("the page does not name instance 2 lost, in one red row:\n%s", dom)
	}
	if rows := regexp.MustCompile(`(?s)<table id="instances">.*?</table>`).FindString(dom); strings.Count(rows, "<tr") != 4 {
		t.Errorf("the instances table has not a row for each of the 3 instances:\n%s", rows)
	}
	shot := filepath.Join(t.TempDir(), "dash-instances.png")
	browsertest.Screenshot(t, bin, url, shot, 1280, 900)
	if os.Getenv("LLMRUN_KEEP_SCREENSHOTS") != "" {
		if b, err := os.ReadFile(shot); err == nil {
			os.WriteFile(filepath.Join(os.TempDir(), "dash-instances.png"), b, 0o644)
		}
	}

	// Instance 0 goes; instance 1 is told once, and runs on until
	// interrupted.
	gone := regexp.MustCompile(`instance 0's dashboard no longer gets this instance's figures; this instance's run goes on`)
	p0.cmd.Process.Signal(os.Interrupt)
	p0.wait()
	p1.await(t, ctx, gone)
	p1.cmd.Process.Signal(os.Interrupt)
	if _, stderr := p1.wait(); len(gone.FindAllString(stderr, -1)) != 1 {
		t.Errorf("instance 1 said %d times that instance 0 is gone, want once:\n%s", len(gone.FindAllString(stderr, -1)), stderr)
	}
}
