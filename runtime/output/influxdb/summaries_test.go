package influxdb

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/summarytest"
)

// The results a run's instances stored are parsed as they are decoded
// from the answer's chunks, never held unpacked: six instances' result
// files of a long run cost about what they parse to. Allocations are
// counted (TotalAlloc), the same at every run: reading them allocates
// less than one and a half times the result files' bytes, where joining,
// unpacking and parsing each whole allocated 4.7 times. Not parallel: it
// counts the process's allocations.
func TestReadSummariesParsesAsTheyUnpack(t *testing.T) {
	s := influxtest.Start(t)
	cfg := testConfig(s)
	cfg.FlushTimeout = 2 * time.Minute // six writes of some 1 MB on a loaded machine
	run := testRun(t)
	var docBytes int
	for i := range 6 {
		run.Tags = map[string]string{"instance": fmt.Sprint(i)}
		o := startOutput(t, cfg, run)
		sum := summarytest.LongRun(t, run.ID, 20_000)
		doc, err := resultDocument(sum)
		if err != nil {
			t.Fatal(err)
		}
		docBytes += len(doc)
		if rep := o.Finish(context.Background(), sum); rep.Dropped != 0 {
			t.Fatalf("report %+v, want nothing dropped", rep)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	results, names, err := ReadSummaries(ctx, cfg, run.ID, capped.NewBudget(1<<30, "the result files one merge unpacks"))
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
