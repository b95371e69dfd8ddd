package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// scrapeSum GETs url and returns, by metric name, the sum of the values
// of its series (all label sets) in the text format.
func scrapeSum(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	sums := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// name{labels} value, or name value; label values may hold spaces.
		series, value, _ := strings.Cut(line, " ")
		if i := strings.LastIndexByte(line, '}'); i >= 0 {
			series, value = line[:i+1], line[i+1:]
		}
		name, _, _ := strings.Cut(series, "{")
		fields := strings.Fields(value)
		if len(fields) == 0 {
			return nil, fmt.Errorf("%q: no value", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		sums[name] += v
	}
	return sums, sc.Err()
}

// onFreePort calls run with a port of 127.0.0.1 free a moment ago, and
// again with another (3 times at most) when the run found it taken:
// another test's connection can take it before llmrun binds it.
func onFreePort[R any](t *testing.T, run func(port int) (R, string)) R {
	t.Helper()
	for range 3 {
		res, stderr := run(freePort(t))
		if !strings.Contains(stderr, "address already in use") {
			return res
		}
	}
	t.Fatal("every port picked was taken before llmrun bound it")
	var none R
	return none
}

// promRun is a run with --out prometheus and the last scrape seen while
// it went.
type promRun struct {
	url            string
	code           int
	stdout, stderr string
	sums           map[string]float64
	scrapeErr      error
}

// A run with --out prometheus serves its live metrics while it goes.
func TestRunServesPrometheusMetrics(t *testing.T) {
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 8))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := onFreePort(t, func(port int) (promRun, string) {
		r := scrapeWhileRunning(ctx, t, port, script)
		return r, r.stderr
	})
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.sums == nil {
		t.Fatalf("no scrape of %s answered while the run went: %v", r.url, r.scrapeErr)
	}
	if r.sums["llmrun_ttft_seconds_count"] <= 0 || r.sums["llmrun_active_vus"] != 2 || r.sums["llmrun_max_vus"] != 2 {
		t.Errorf("llmrun_ttft_seconds_count %g, llmrun_active_vus %g, llmrun_max_vus %g; want > 0, 2 and 2",
			r.sums["llmrun_ttft_seconds_count"], r.sums["llmrun_active_vus"], r.sums["llmrun_max_vus"])
	}
	if r.sums["llmrun_run_info"] != 1 {
		t.Errorf("llmrun_run_info %g, want 1", r.sums["llmrun_run_info"])
	}
	if !strings.Contains(r.stdout, "prometheus "+r.url) {
		t.Errorf("the summary does not name the output:\n%s", r.stdout)
	}
	if _, err := scrapeSum(ctx, r.url); err == nil {
		t.Errorf("%s still answers after the run", r.url)
	}
}

// scrapeWhileRunning runs script with --out prometheus on port, and
// scrapes until a scrape shows both requests and the two VUs, the run
// ends, or a minute passes; it returns the last scrape seen.
func scrapeWhileRunning(ctx context.Context, t *testing.T, port int, script string) promRun {
	r := promRun{url: fmt.Sprintf("http://127.0.0.1:%d/metrics", port)}
	runDone := make(chan struct{})
	scraped := make(chan promRun, 1)
	go func() {
		var s promRun
		defer func() { scraped <- s }()
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
			sums, err := scrapeSum(sctx, r.url)
			scancel()
			if err == nil {
				s.sums = sums
				if sums["llmrun_ttft_seconds_count"] > 0 && sums["llmrun_active_vus"] == 2 {
					return
				}
			} else if s.sums == nil {
				s.scrapeErr = err
			}
			select {
			case <-runDone:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	r.code, r.stdout, r.stderr = cli(t, ctx, nil, "run", "-q", "-d", "3s", "-u", "2", "--out", "prometheus="+addr, script)
	close(runDone)
	s := <-scraped
	r.sums, r.scrapeErr = s.sums, s.scrapeErr
	return r
}
