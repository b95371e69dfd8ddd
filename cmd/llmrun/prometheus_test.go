package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// bannerURL is a run's stdout that watches the banner for the URL of its
// Prometheus output: given prometheus=127.0.0.1:0, llmrun binds a port of
// its own and names it there, so a test never picks a port another can
// take first.
type bannerURL struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	url   chan string // receives the URL once
	found bool
}

var promOutputLine = regexp.MustCompile(`output: +prometheus (http://\S+/metrics)`)

func newBannerURL() *bannerURL { return &bannerURL{url: make(chan string, 1)} }

func (b *bannerURL) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if m := promOutputLine.FindSubmatch(b.buf.Bytes()); m != nil && !b.found {
		b.found = true
		b.url <- string(m[1])
	}
	return len(p), nil
}

func (b *bannerURL) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
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
	t.Parallel()
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 8))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stdout := newBannerURL()
	type exit struct {
		code   int
		stderr string
	}
	done := make(chan exit, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		var stderr bytes.Buffer
		code := run(ctx, []string{"run", "-d", "3s", "-u", "2", "--out", "prometheus=127.0.0.1:0", script}, stdout, &stderr, func(string) string { return "" })
		done <- exit{code, stderr.String()}
	}()

	var url string
	select {
	case url = <-stdout.url:
	case <-ended:
		e := <-done
		t.Fatalf("the run ended before naming its Prometheus output: exit %d\n%s\n%s", e.code, stdout, e.stderr)
	}
	// Scrape until a scrape shows requests and the two VUs, the run ends,
	// or a minute passes; keep the first scrape that shows them.
	var sums map[string]float64
	var scrapeErr error
scraping:
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
		got, err := scrapeSum(sctx, url)
		scancel()
		if err != nil {
			scrapeErr = err
		} else if got["llmrun_ttft_seconds_count"] > 0 && got["llmrun_active_vus"] == 2 {
			sums = got
			break
		}
		select {
		case <-ended:
			break scraping
		case <-time.After(50 * time.Millisecond):
		}
	}
	e := <-done
	if e.code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", e.code, stdout, e.stderr)
	}
	if sums == nil {
		t.Fatalf("no scrape of %s showed requests and the 2 VUs while the run went (last error: %v)", url, scrapeErr)
	}
	if sums["llmrun_ttft_seconds_count"] <= 0 || sums["llmrun_active_vus"] != 2 || sums["llmrun_max_vus"] != 2 {
		t.Errorf("llmrun_ttft_seconds_count %g, llmrun_active_vus %g, llmrun_max_vus %g; want > 0, 2 and 2",
			sums["llmrun_ttft_seconds_count"], sums["llmrun_active_vus"], sums["llmrun_max_vus"])
	}
	if sums["llmrun_run_info"] != 1 {
		t.Errorf("llmrun_run_info %g, want 1", sums["llmrun_run_info"])
	}
	if !strings.Contains(stdout.String(), "prometheus "+url) {
		t.Errorf("the summary does not name the output:\n%s", stdout)
	}
	if _, err := scrapeSum(ctx, url); err == nil {
		t.Errorf("%s still answers after the run", url)
	}
}
