package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
)

// In a run of three instances against one simulator, whose /metrics each
// would find at its base URL's root, only instance 0 reads it: the
// others' results have no server section and every read of /metrics the
// simulator served is one instance 0 counted (its look at the root, then
// its scrapes). llmrun merge of the three keeps that one copy of the
// target, naming instance 0.
func TestInstancesScrapeOnce(t *testing.T) {
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	var metricsReads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			metricsReads.Add(1)
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	script := writeScript(t, "instance.js", instanceScript)
	result := func(i int) string { return filepath.Join(dir, fmt.Sprintf("instance%d.json", i)) }
	runInstances(t, ctx, 3, func(i int, addr string) []string {
		return []string{"--instances", "3", "--instance", strconv.Itoa(i), "--rendezvous", addr, "--seed", "7",
			"--base-url", srv.URL + "/v1", "--summary-export", result(i), script}
	})

	first := readSummary(t, result(0))
	if first.Server == nil || len(first.Server.Targets) != 1 {
		t.Fatalf("instance 0's server section: %+v, want the simulator's /metrics", first.Server)
	}
	target := first.Server.Targets[0]
	if target.URL != srv.URL+"/metrics" || target.Scrapes.OK < 2 {
		t.Errorf("instance 0 read %s, %d times: want %s/metrics, at the run's start and end at least", target.URL, target.Scrapes.OK, srv.URL)
	}
	for i := 1; i < 3; i++ {
		if s := readSummary(t, result(i)); s.Server != nil {
			t.Errorf("instance %d has a server section of %d targets; only instance 0 reads the servers", i, len(s.Server.Targets))
		}
	}
	// Instance 0's look at the root and its first read (the engine's),
	// then each scrape it counted, and perhaps one the end canceled
	// after it reached the simulator: another instance's look and
	// first read would be two more.
	counted := target.Scrapes.OK + target.Scrapes.Failures()
	if got := metricsReads.Load(); got < counted+2 || got > counted+3 {
		t.Errorf("the simulator served %d reads of /metrics, want instance 0's %d and 2 or 3 more: another instance read it", got, counted)
	}

	merged, err := readMerged(t, result(0), result(1), result(2))
	if err != nil {
		t.Fatal(err)
	}
	m := readSummary(t, merged)
	if m.Server == nil || len(m.Server.Targets) != 1 {
		t.Fatalf("merged server section: %+v, want one copy of the target", m.Server)
	}
	got := m.Server.Targets[0]
	if got.Instance != "0" || got.URL != target.URL || !reflect.DeepEqual(got.Figures, target.Figures) || got.Scrapes.OK != target.Scrapes.OK {
		t.Errorf("merged target: %s from instance %q, %d scrapes; want instance 0's copy of %s, %d scrapes, its figures",
			got.URL, got.Instance, got.Scrapes.OK, target.URL, target.Scrapes.OK)
	}
}
