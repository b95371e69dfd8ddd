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

// A run with --out prometheus serves its live metrics while it goes.
func TestRunServesPrometheusMetrics(t *testing.T) {
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", freePort(t))
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics")
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 8))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Scrape until a scrape shows both requests and the two VUs, the run
	// ends, or the deadline passes; report the last scrape seen.
	runDone := make(chan struct{})
	type seen struct {
		sums map[string]float64
		err  error
	}
	last := make(chan seen, 1)
	go func() {
		var s seen
		defer func() { last <- s }()
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
			sums, err := scrapeSum(sctx, url)
			scancel()
			if err == nil {
				s = seen{sums: sums}
				if sums["llmrun_ttft_seconds_count"] > 0 && sums["llmrun_active_vus"] == 2 {
					return
				}
			} else if s.sums == nil {
				s.err = err
			}
			select {
			case <-runDone:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()

	code, stdout, stderr := cli(t, ctx, nil, "run", "-q", "-d", "3s", "-u", "2", "--out", "prometheus="+addr, script)
	close(runDone)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := <-last
	if s.sums == nil {
		t.Fatalf("no scrape of %s answered while the run went: %v", url, s.err)
	}
	if s.sums["llmrun_ttft_seconds_count"] <= 0 || s.sums["llmrun_active_vus"] != 2 || s.sums["llmrun_max_vus"] != 2 {
		t.Errorf("llmrun_ttft_seconds_count %g, llmrun_active_vus %g, llmrun_max_vus %g; want > 0, 2 and 2",
			s.sums["llmrun_ttft_seconds_count"], s.sums["llmrun_active_vus"], s.sums["llmrun_max_vus"])
	}
	if s.sums["llmrun_run_info"] != 1 {
		t.Errorf("llmrun_run_info %g, want 1", s.sums["llmrun_run_info"])
	}
	if !strings.Contains(stdout, "prometheus "+url) {
		t.Errorf("the summary does not name the output:\n%s", stdout)
	}
	if _, err := scrapeSum(ctx, url); err == nil {
		t.Errorf("%s still answers after the run", url)
	}
}
