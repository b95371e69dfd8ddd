package results

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
)

// The results a run's instances stored are parsed as they are decoded
// from the answer's chunks, never held unpacked: six instances' result
// files of a long run cost about what they parse to. Allocations are
// counted (TotalAlloc), the same at every run: reading them allocates
// less than one and a half times the result files' bytes, where joining,
// unpacking and parsing each whole allocated 4.7 times. Not parallel: it
// counts the process's allocations.
func TestReadStoredParsesAsTheyUnpack(t *testing.T) {
	s := influxtest.Start(t)
	cfg, err := influxdb.ParseConfig(s.URL+"?bucket="+s.Bucket, func(k string) string { return map[string]string{influxdb.TokenEnv: s.Token}[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.FlushTimeout = 2 * time.Minute // six writes of some 1 MB on a loaded machine
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := output.Run{ID: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), TestID: "chat", Start: time.Now().Add(-time.Minute).Truncate(time.Millisecond)}
	var docBytes int
	for i := range 6 {
		run.Tags = map[string]string{"instance": fmt.Sprint(i)}
		o := influxdb.New(cfg)
		if err := o.Start(ctx, run); err != nil {
			t.Fatal(err)
		}
		sum := summarytest.LongRun(t, run.ID, 20_000)
		var doc bytes.Buffer
		if err := sum.WriteJSON(&doc); err != nil {
			t.Fatal(err)
		}
		docBytes += doc.Len()
		if rep := o.Finish(ctx, sum); rep.Dropped != 0 || rep.Err != "" {
			t.Fatalf("report %+v, want nothing dropped", rep)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	results, names, err := readStored(ctx, cfg, run.ID, capped.NewBudget(1<<30, "the result files one merge unpacks"))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 6 || names[5] != "the result of instance 5 of run "+run.ID+" in InfluxDB" || len(results[5].Timeline) != 20_000 {
		t.Fatalf("read %d results (%v), want the six instances' whole", len(results), names)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("six result files of %d bytes in all: reading them allocated %d bytes (%.2f times)", docBytes, allocated, float64(allocated)/float64(docBytes))
	if allocated > uint64(docBytes)*3/2 {
		t.Errorf("reading six stored result files of %d bytes in all allocated %d bytes: they were unpacked whole", docBytes, allocated)
	}
}
