package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// heldStream starts an OpenAI-compatible server whose chat streams send
// sent content chunks, then hold until release is closed, then send as
// many more and a usage of two tokens per chunk. It returns its URL.
func heldStream(t *testing.T, sent int, release <-chan struct{}) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(data string) {
			fmt.Fprintf(w, "data: %s\n\n", data)
			w.(http.Flusher).Flush()
		}
		chunks := func() {
			for range sent {
				event(`{"choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}]}`)
			}
		}
		chunks()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		chunks()
		event(`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`)
		event(fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":%d}}`, 4*sent))
		event("[DONE]")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// heldRun runs one request against a held stream of 5 chunks, with the
// environment env and the given flags; its stdout goes to stdout, with
// the banner (nil: quiet, kept for the return value). While the stream is
// held, it polls seen until it reports true, the run ends or a minute
// passes; then it releases the stream. It returns the exit code, stdout
// and stderr, and the result file.
func heldRun(t *testing.T, env map[string]string, stdout io.Writer, flags []string, seen func(ctx context.Context) bool) (int, string, string, string) {
	t.Helper()
	release := make(chan struct{})
	url := heldStream(t, 5, release)
	script := writeScript(t, "held.js", fmt.Sprintf(chatScript, 20))
	export := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"run", "--no-preflight", "-u", "1", "-i", "1", "--base-url", url, "--model", "m", "--summary-export", export}
	if stdout == nil {
		stdout = new(bytes.Buffer)
		args = append(args, "-q")
	}
	type exit struct {
		code   int
		stderr string
	}
	done := make(chan exit, 1)
	running, ended := context.WithCancel(ctx)
	go func() {
		defer ended()
		var stderr bytes.Buffer
		code := run(ctx, append(append(args, flags...), script), stdout, &stderr, func(k string) string { return env[k] })
		done <- exit{code, stderr.String()}
	}()
	for deadline := time.Now().Add(time.Minute); running.Err() == nil && time.Now().Before(deadline) && !seen(running); {
		select {
		case <-running.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	close(release)
	e := <-done
	return e.code, fmt.Sprint(stdout), e.stderr, export
}

// While a request streams, Prometheus's output token counter shows the
// tokens that arrived, before the request ends; at the end, the counter
// and the result file's timeline have the rest of its usage too.
func TestLiveOutputTokensBeforeTheRequestEnds(t *testing.T) {
	t.Parallel()
	// llmrun binds a port of its own and names it in the banner.
	banner := newBannerURL()
	var url string
	var seen map[string]float64
	code, stdout, stderr, export := heldRun(t, nil, banner, []string{"--out", "prometheus=127.0.0.1:0"}, func(ctx context.Context) bool {
		if url == "" {
			select {
			case url = <-banner.url:
			default:
				return false
			}
		}
		// Scrape until the first 5 tokens show: the request cannot end
		// before the stream is released.
		if sums, err := scrapeSum(ctx, url); err == nil {
			seen = sums
		}
		return seen["llmrun_output_tokens_total"] >= 5
	})
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if seen["llmrun_output_tokens_total"] != 5 || seen["llmrun_requests_total"] != 0 {
		t.Errorf("while streaming: %g output tokens, %g requests; want 5 and none",
			seen["llmrun_output_tokens_total"], seen["llmrun_requests_total"])
	}
	s := readSummary(t, export)
	var sum int64
	for _, p := range s.Timeline {
		sum += p.OutputTokens
	}
	if sum != 20 || s.Serving.OutputTokens != 20 {
		t.Errorf("timeline %+v: %d output tokens, the summary %d; want the usage's 20", s.Timeline, sum, s.Serving.OutputTokens)
	}
}

// While a request streams, InfluxDB's llm_interval points carry its output
// tokens: a point of its scenario with output_tok_per_s and no request.
func TestInfluxIntervalsBeforeTheRequestEnds(t *testing.T) {
	t.Parallel()
	db := influxtest.Start(t)
	testID := fmt.Sprintf("held-%d", time.Now().UnixNano())
	query := fmt.Sprintf(`SELECT COUNT(output_tok_per_s) FROM llm_interval WHERE testid='%s' AND scenario='default' AND output_tok_per_s > 0 AND requests = 0`, testID)
	points := 0
	env := map[string]string{"LLMRUN_INFLUXDB_TOKEN": db.Token}
	code, stdout, stderr, _ := heldRun(t, env, nil, []string{"--testid", testID, "--out", "influxdb=" + db.URL + "?bucket=" + db.Bucket + "&interval=1s"},
		func(context.Context) bool {
			points = influxCount(t, db, query)
			return points > 0
		})
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if points == 0 {
		t.Error("no llm_interval point of the scenario with output_tok_per_s > 0 and no request while the request streamed")
	}
}

// A shared-iterations or per-vu-iterations scenario that its maxDuration
// ends before it started all its iterations reports those as planned but
// not started, as an arrival-rate scenario does those its duration left
// out: in the result file's dropped_iterations, the summary's iterations
// line and warning, the live view's last line (not "done 100%"), and to
// a threshold on dropped_iterations. The iteration blocks until the
// scenario's end interrupts it, so that exactly one of five starts.
func TestIterationsCutByMaxDurationAreReported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ executor, shape string }{
		{"shared-iterations", "vus: 1, iterations: 5"},
		{"per-vu-iterations", "vus: 1, iterations: 5"},
	} {
		t.Run(tc.executor, func(t *testing.T) {
			t.Parallel()
			script := writeScript(t, "cut.js", fmt.Sprintf(`
import { sleep } from 'llmrun';
export const options = {
  scenarios: { cut: { executor: '%s', %s, maxDuration: '1s', gracefulStop: '0s' } },
  thresholds: { dropped_iterations: ['count==0'] },
};
export default function () { sleep(3600); }
`, tc.executor, tc.shape))
			export := filepath.Join(t.TempDir(), "r.json")
			code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", "--summary-export", export, script)
			s := readSummary(t, export)
			if s.Serving.DroppedIterations != 4 || s.Serving.InterruptedIterations != 1 {
				t.Errorf("result file: %d dropped, %d interrupted; want 4 not started and the 1 started interrupted",
					s.Serving.DroppedIterations, s.Serving.InterruptedIterations)
			}
			for _, want := range []string{"1 interrupted, 4 planned not started (dropped)",
				"4 planned iterations of scenario cut were not started: its maxDuration ended it first"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("the summary lacks %q:\n%s", want, stdout)
				}
			}
			if !strings.Contains(stderr, "cut: done 20%, 4 not started") || strings.Contains(stderr, "done 100%") {
				t.Errorf("the live view's last line does not tell the iterations not started:\n%s", stderr)
			}
			if !strings.Contains(stdout, "dropped_iterations") || code == exitcode.OK {
				t.Errorf("exit %d, want the threshold on dropped_iterations failed:\n%s", code, stdout)
			}
		})
	}
}
