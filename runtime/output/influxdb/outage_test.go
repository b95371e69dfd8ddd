package influxdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/runtime/summary"
)

// oneScenario is the summary of a run with one scenario.
func oneScenario(start time.Time) *summary.Summary {
	return &summary.Summary{Meta: summary.Meta{Start: start, Models: []string{"m1"}}, Serving: summary.Serving{Requests: 1, OK: 1, SuccessRate: 1}}
}

// totalPoints counts the run's points in every measurement.
func totalPoints(t *testing.T, s *influxtest.Server, runID string) int64 {
	t.Helper()
	n := 0
	for _, m := range []string{mRunStart, mRequest, mInterval, mRun, mResult} {
		n += countPoints(t, s, m, runID)
	}
	return int64(n)
}

// waitFailing waits until the writer has seen a write fail.
func waitFailing(t *testing.T, o *Output) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		o.buf.mu.Lock()
		failing := o.buf.failing
		o.buf.mu.Unlock()
		if failing {
			return
		}
	}
	t.Fatal("the writer saw no failure within 10 s")
}

// An outage that the buffer bridges loses nothing: the writer keeps the
// failed batch and what comes meanwhile, and sends it all once the server
// is back.
func TestShortOutage(t *testing.T) {
	t.Parallel()
	s := influxtest.Start(t)
	run := testRun(t)
	cfg := testConfig(s)
	cfg.Batch = 100
	o := startOutput(t, cfg, run)
	at := run.Start
	add := func(n int) {
		for range n {
			at = at.Add(time.Millisecond)
			o.AddRequest(okRecord("chat", at))
		}
	}
	add(50)
	s.Stop()
	for range 10 {
		add(20)
		time.Sleep(150 * time.Millisecond)
	}
	waitFailing(t, o)
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	rep := o.Finish(context.Background(), oneScenario(run.Start))
	// llm_run_start, the requests, two llm_interval points, llm_run and
	// one llm_result point.
	if want := int64(1 + 250 + 2 + 1 + 1); rep.Written != want || rep.Dropped != 0 || len(rep.Reasons) != 0 {
		t.Errorf("report %+v, want %d written, none dropped", rep, want)
	}
	if !strings.Contains(rep.Err, "connection refused") {
		t.Errorf("report's error %q, want the outage's", rep.Err)
	}
	if n := countPoints(t, s, mRequest, run.ID); n != 250 {
		t.Errorf("%d llm_request points, want 250", n)
	}
	if n := totalPoints(t, s, run.ID); n != rep.Written {
		t.Errorf("%d points stored, %d reported written", n, rep.Written)
	}
}

// A longer outage fills the buffer: what does not fit is dropped and
// counted with the outage's error, and the rest is written once the
// server is back.
func TestLongOutage(t *testing.T) {
	t.Parallel()
	s := influxtest.Start(t)
	run := testRun(t)
	cfg := testConfig(s)
	cfg.Buffer = 50
	o := startOutput(t, cfg, run)
	s.Stop()
	at := run.Start
	for i := range 200 {
		if i == 10 {
			waitFailing(t, o)
		}
		at = at.Add(time.Millisecond)
		o.AddRequest(okRecord("chat", at))
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	rep := o.Finish(context.Background(), oneScenario(run.Start))
	const produced = 1 + 200 + 2 + 1 + 1
	if rep.Dropped < 150 || rep.Written+rep.Dropped != produced {
		t.Errorf("report %+v, want at least 150 of %d dropped, the rest written", rep, produced)
	}
	full := 0
	for r, n := range rep.Reasons {
		if strings.HasPrefix(r, "buffer full (50 points) while InfluxDB was failing: ") && strings.Contains(r, "connection refused") {
			full += int(n)
		}
	}
	if full < 150 {
		t.Errorf("reasons %v, want at least 150 dropped as the buffer was full while InfluxDB failed", rep.Reasons)
	}
	if n := totalPoints(t, s, run.ID); n != rep.Written {
		t.Errorf("%d points stored, %d reported written", n, rep.Written)
	}
	if n := countPoints(t, s, mRun, run.ID); n != 1 {
		t.Errorf("%d llm_run points, want 1 (it goes past a full buffer)", n)
	}
}

// With the server down to the end, Finish gives up at the flush timeout
// and counts everything unsent as dropped.
func TestFinishWhileDown(t *testing.T) {
	t.Parallel()
	s := influxtest.Start(t)
	run := testRun(t)
	cfg := testConfig(s)
	cfg.FlushTimeout = time.Second
	o := startOutput(t, cfg, run)
	s.Stop()
	for i := range 100 {
		o.AddRequest(okRecord("chat", run.Start.Add(time.Duration(i)*time.Millisecond)))
	}
	begin := time.Now()
	rep := o.Finish(context.Background(), oneScenario(run.Start))
	if took := time.Since(begin); took > 3*time.Second {
		t.Errorf("Finish took %s with a 1s flush timeout", took)
	}
	if rep.Written != 1 || rep.Dropped != 100+2+1+1 {
		t.Errorf("report %+v, want llm_run_start written, 104 dropped", rep)
	}
	for r := range rep.Reasons {
		if !strings.HasPrefix(r, "not written within the 1s flush timeout: ") || !strings.Contains(r, "connection refused") {
			t.Errorf("reason %q", r)
		}
	}
	if !strings.Contains(rep.Err, "connection refused") {
		t.Errorf("report's error %q", rep.Err)
	}
}

// A batch InfluxDB rejects (a field type conflict) is dropped and counted,
// but for the points a partial write stored.
func testRejected(t *testing.T, s *influxtest.Server) {
	if _, err := s.InfluxQL(context.Background(), "CREATE DATABASE rejected"); err != nil {
		t.Fatal(err)
	}
	run := testRun(t)
	at := run.Start.Add(time.Second)
	cfg := testConfig(s)
	cfg.Bucket = "rejected/autogen"
	o := New(cfg)
	// ttft is a float; make it an integer first.
	client := o.cfg.NewClient()
	defer client.Close()
	if err := client.WriteAPIBlocking("", cfg.Bucket).WriteRecord(context.Background(), fmt.Sprintf("llm_request ttft=1i %d", at.UnixNano())); err != nil {
		t.Fatal(err)
	}
	if err := o.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	failed := okRecord("chat", at.Add(3*time.Millisecond))
	failed.OK, failed.ErrorClass, failed.TTFT = false, "timeout", 0
	o.AddRequest(okRecord("chat", at.Add(time.Millisecond)))
	o.AddRequest(okRecord("chat", at.Add(2*time.Millisecond)))
	o.AddRequest(failed)
	rep := o.Finish(context.Background(), nil)
	if rep.Dropped != 2 || rep.Written != 1+1+2 {
		t.Errorf("report %+v, want the 2 points with a float ttft dropped", rep)
	}
	for r, n := range rep.Reasons {
		if !strings.HasPrefix(r, "rejected by InfluxDB: HTTP 400") || !strings.Contains(r, "field type conflict") || n != 2 {
			t.Errorf("reason %q (%d)", r, n)
		}
	}
	if n := countPoints(t, s, `"rejected"."autogen"."llm_request"`, run.ID); n != 1 {
		t.Errorf("%d llm_request points stored, want the failed request's", n)
	}
}
