package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/runtime/executor/segment"
)

// replayVU records, for each iteration, when it started (from origin, in
// the bubble's clock) and which record it replayed; each lasts work.
type replayVU struct {
	work time.Duration
	log  *replayLog
}

type replayLog struct {
	origin time.Time
	mu     sync.Mutex
	starts map[int64]time.Duration // by record index
	dupes  int
}

func (v *replayVU) RunIteration(ctx context.Context) {
	rec, ok := TraceRecord(ctx)
	v.log.mu.Lock()
	if !ok {
		v.log.dupes++ // an iteration without a record is a failure too
	} else if _, seen := v.log.starts[rec.Index]; seen {
		v.log.dupes++
	} else {
		v.log.starts[rec.Index] = time.Since(v.log.origin)
	}
	v.log.mu.Unlock()
	t := time.NewTimer(v.work)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// writeTrace writes a generic JSONL trace whose record i starts at
// stamps[i] milliseconds, and returns its path.
func writeTrace(t *testing.T, stamps ...int) string {
	t.Helper()
	var b strings.Builder
	for i, ms := range stamps {
		fmt.Fprintf(&b, `{"timestamp_ms": %d, "input_tokens": %d, "output_tokens": 8}`+"\n", ms, 100+i)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// openReplay decodes a trace-replay configuration of the trace at path
// and reads the trace, as the engine does before the run.
func openReplay(t *testing.T, path, js string) *TraceReplay {
	t.Helper()
	fields := map[string]any{}
	if err := json.Unmarshal([]byte(js), &fields); err != nil {
		t.Fatal(err)
	}
	fields["trace"] = path
	b, _ := json.Marshal(fields)
	cfg := decode(t, "trace-replay", string(b)).(*TraceReplay)
	if err := cfg.OpenTrace(t.Context(), identity); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func identity(_, path string) (string, error) { return path, nil }

// replay runs cfg in a synctest bubble with its preallocated VUs (and
// more on demand), and returns each record's start and the pool.
func replay(t *testing.T, cfg Config, work time.Duration) (map[int64]time.Duration, *testPool) {
	t.Helper()
	log := &replayLog{starts: map[int64]time.Duration{}}
	var pool *testPool
	synctest.Test(t, func(t *testing.T) {
		log.origin = time.Now()
		mk := func() VU { return &replayVU{work: work, log: log} }
		pre := make([]VU, cfg.PreAllocatedVUs())
		for i := range pre {
			pre[i] = mk()
		}
		pool = &testPool{pre: pre, mk: mk}
		if err := cfg.NewExecutor(0).Run(t.Context(), pool); err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
	if log.dupes != 0 {
		t.Errorf("%d iterations replayed a record twice or none", log.dupes)
	}
	return log.starts, pool
}

func TestTraceReplayStartsEachRecordAtItsScaledTimestamp(t *testing.T) {
	t.Parallel()
	path := writeTrace(t, 1000, 1000, 1250, 4000, 4001, 9000)
	tests := []struct {
		name, js string
		want     map[int64]time.Duration
	}{
		{"speed 1", `{"preAllocatedVUs": 4}`,
			map[int64]time.Duration{0: 0, 1: 0, 2: 250 * time.Millisecond, 3: 3 * time.Second, 4: 3001 * time.Millisecond, 5: 8 * time.Second}},
		{"twice as fast", `{"preAllocatedVUs": 4, "speed": 2}`,
			map[int64]time.Duration{0: 0, 1: 0, 2: 125 * time.Millisecond, 3: 1500 * time.Millisecond, 4: 1500500 * time.Microsecond, 5: 4 * time.Second}},
		{"a window", `{"preAllocatedVUs": 4, "window": {"from": "250ms", "duration": "3s"}}`,
			map[int64]time.Duration{2: 0, 3: 2750 * time.Millisecond, 4: 2751 * time.Millisecond}},
		{"a limit", `{"preAllocatedVUs": 4, "limit": 3}`,
			map[int64]time.Duration{0: 0, 1: 0, 2: 250 * time.Millisecond}},
		{"a window and a limit, slower", `{"preAllocatedVUs": 4, "window": {"from": "3s"}, "limit": 2, "speed": 0.5}`,
			map[int64]time.Duration{3: 0, 4: 2 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := openReplay(t, path, tt.js)
			if p := cfg.Plan(); p.Iterations != int64(len(tt.want)) {
				t.Errorf("plans %d iterations, want %d", p.Iterations, len(tt.want))
			}
			starts, pool := replay(t, cfg, 10*time.Millisecond)
			if fmt.Sprint(starts) != fmt.Sprint(tt.want) {
				t.Errorf("started\n %v\nwant\n %v", starts, tt.want)
			}
			lags, warns := pool.recorded()
			if len(lags) != len(tt.want) || slices.Max(lags) != 0 || pool.dropped.Load() != 0 || len(warns) != 0 {
				t.Errorf("lags %v, %d dropped, warnings %q: want every record on time", lags, pool.dropped.Load(), warns)
			}
		})
	}
}

func TestTraceReplayCountsLagAndDropsWhenVUsAreShort(t *testing.T) {
	t.Parallel()
	// 10 records 100ms apart, iterations of 250ms.
	path := writeTrace(t, 0, 100, 200, 300, 400, 500, 600, 700, 800, 900)
	t.Run("dropped without a free VU", func(t *testing.T) {
		t.Parallel()
		cfg := openReplay(t, path, `{"preAllocatedVUs": 1}`)
		starts, pool := replay(t, cfg, 250*time.Millisecond)
		// One VU runs the records at 0, 300, 600, 900 ms; the others
		// find it busy.
		want := map[int64]time.Duration{0: 0, 3: 300 * time.Millisecond, 6: 600 * time.Millisecond, 9: 900 * time.Millisecond}
		if fmt.Sprint(starts) != fmt.Sprint(want) {
			t.Errorf("started %v, want %v", starts, want)
		}
		if d, busy := pool.dropped.Load(), pool.byCause[DropBusy].Load(); d != 6 || busy != 6 {
			t.Errorf("dropped %d (%d busy), want the 6 records that found the VU busy", d, busy)
		}
		if _, warns := pool.recorded(); len(warns) != 1 || !strings.Contains(warns[0], "dropped_iterations") {
			t.Errorf("warnings %q, want one about dropped iterations", warns)
		}
	})
	t.Run("late while a VU is initialised", func(t *testing.T) {
		t.Parallel()
		cfg := openReplay(t, path, `{"preAllocatedVUs": 1, "maxVUs": 4}`)
		log := &replayLog{starts: map[int64]time.Duration{}}
		var pool *testPool
		synctest.Test(t, func(t *testing.T) {
			log.origin = time.Now()
			mk := func() VU { return &replayVU{work: 250 * time.Millisecond, log: log} }
			pool = &testPool{pre: []VU{mk()}, mk: mk, initDelay: 30 * time.Millisecond}
			if err := cfg.NewExecutor(0).Run(t.Context(), pool); err != nil {
				t.Fatal(err)
			}
		})
		lags, _ := pool.recorded()
		if len(log.starts) != 10 || pool.dropped.Load() != 0 {
			t.Fatalf("started %d, dropped %d: want all 10 started", len(log.starts), pool.dropped.Load())
		}
		if slices.Max(lags) != 30*time.Millisecond || log.starts[1] != 130*time.Millisecond {
			t.Errorf("lags %v, record 1 started at %s: want the 30ms of a new VU's init as lag", lags, log.starts[1])
		}
	})
}

func TestTraceReplaySegmentsReplayEachRecordOnce(t *testing.T) {
	t.Parallel()
	stamps := make([]int, 50)
	for i := range stamps {
		stamps[i] = i * 37
	}
	path := writeTrace(t, stamps...)
	whole := openReplay(t, path, `{"preAllocatedVUs": 3, "window": {"from": "100ms"}, "limit": 40}`)
	for _, seq := range []string{"0,1/3,2/3,1", "0,1/4,1/2,1", "0,1/7,1"} {
		t.Run(seq, func(t *testing.T) {
			t.Parallel()
			all := map[int64]time.Duration{}
			var planned int64
			for _, p := range parts(t, seq) {
				part := whole.Segment(p)
				planned += part.Plan().Iterations
				starts, pool := replay(t, part, time.Millisecond)
				if pool.dropped.Load() != 0 {
					t.Errorf("part %s dropped %d", p, pool.dropped.Load())
				}
				for i, at := range starts {
					if _, dup := all[i]; dup {
						t.Errorf("record %d replayed by two parts", i)
					}
					all[i] = at
				}
			}
			if planned != 40 || len(all) != 40 {
				t.Fatalf("the parts plan %d and replay %d records, want the window's 40", planned, len(all))
			}
			for i := int64(3); i < 43; i++ {
				if want := time.Duration(i*37-100) * time.Millisecond; all[i] != want {
					t.Errorf("record %d started at %s, want %s", i, all[i], want)
				}
			}
		})
	}
	if whole.Segment(segment.Part{}).Plan().Iterations != 40 {
		t.Errorf("the whole part plans %d", whole.Segment(segment.Part{}).Plan().Iterations)
	}
}

func TestTraceReplayPlanAndDescription(t *testing.T) {
	t.Parallel()
	path := writeTrace(t, 500, 2500, 60500)
	cfg := openReplay(t, path, `{"preAllocatedVUs": 2, "speed": 4}`)
	if p := cfg.Plan(); p.Iterations != 3 || p.Duration != 15*time.Second+TraceEndSlack {
		t.Errorf("plan %+v, want 3 iterations over 60s/4 + the end's slack", p)
	}
	if d := cfg.MaxDuration(); d != 15*time.Second+TraceEndSlack+DefaultGracefulStop {
		t.Errorf("max duration %s", d)
	}
	want := "3 records of the trace " + path + " (from 0s to the end) over 16s at 4× speed (preAllocatedVUs 2, maxVUs 2, gracefulStop 30s)"
	if got := cfg.Describe(); got != want {
		t.Errorf("described\n %q\nwant\n %q", got, want)
	}
}

func TestTraceReplayRefusesBadOptionsAndTraces(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ js, want string }{
		{`{"preAllocatedVUs": 1}`, "trace: is required"},
		{`{"trace": "t.jsonl", "preAllocatedVUs": 1, "format": "parquet"}`, `format: "parquet" is not a trace format`},
		{`{"trace": "t.jsonl", "preAllocatedVUs": 1, "speed": 0}`, "speed: must be a positive number"},
		{`{"trace": "t.jsonl", "preAllocatedVUs": 1, "limit": 0}`, "limit: must be at least 1"},
		{`{"trace": "t.jsonl", "preAllocatedVUs": 1, "window": {"from": "-1s"}}`, "window.from: must not be negative"},
		{`{"trace": "t.jsonl", "preAllocatedVUs": 1, "window": {"duration": "0s"}}`, "window.duration: must be positive"},
		{`{"trace": "t.jsonl", "preAllocatedVUs": 1, "speed": 1e-12, "window": {"duration": "1h"}}`, "speed: 1e-12 replays the window (1h0m0s of the trace) over more than 100 years: raise speed to 1.15e-06 or more"},
		{`{"trace": "t.jsonl", "preAllocatedVUs": 1, "timeUnit": "1m"}`, "timeUnit: does not apply to trace-replay"},
		{`{"trace": "t.jsonl", "preAllocatedVUs": 1, "arrival": "poisson"}`, "arrival: does not apply to trace-replay"},
		{`{"trace": "t.jsonl"}`, "preAllocatedVUs is required"},
	} {
		cfg, _ := New("trace-replay")
		if err := decodeStrictForTest(tt.js, cfg); err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.js, err, tt.want)
		}
	}
	dir := t.TempDir()
	for _, tt := range []struct{ name, content, js, want string }{
		{"bad.jsonl", `{"timestamp_ms": 0, "input_tokens": 1, "output_tokens": 1}` + "\n" + `{"timestamp_ms": 5, "input_tokens": 1}` + "\n", `{}`, `bad.jsonl:2: "output_tokens" is missing`},
		{"back.jsonl", `{"timestamp_ms": 9, "input_tokens": 1, "output_tokens": 1}` + "\n" + `{"timestamp_ms": 5, "input_tokens": 1, "output_tokens": 1}` + "\n", `{}`, `back.jsonl:2: the timestamp is 4ms before the record above it`},
		{"late.jsonl", `{"timestamp_ms": 0, "input_tokens": 1, "output_tokens": 1}` + "\n", `{"window": {"from": "1s"}}`, "late.jsonl: no record in the window replayed (from 1s to the end)"},
		{"missing.jsonl", "", `{}`, "missing.jsonl: no such file"},
		{"slow.jsonl", `{"timestamp_ms": 0, "input_tokens": 1, "output_tokens": 1}` + "\n" + `{"timestamp_ms": 5000, "input_tokens": 1, "output_tokens": 1}` + "\n", `{"speed": 1e-12}`, "slow.jsonl: speed: 1e-12 replays the trace's records (5s of the trace) over more than 100 years: raise speed to 1.6e-09 or more"},
	} {
		path := filepath.Join(dir, tt.name)
		if tt.content != "" {
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fields := map[string]any{}
		_ = json.Unmarshal([]byte(tt.js), &fields)
		fields["trace"], fields["preAllocatedVUs"] = path, 1
		b, _ := json.Marshal(fields)
		cfg := decode(t, "trace-replay", string(b)).(*TraceReplay)
		if err := cfg.OpenTrace(t.Context(), identity); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}
