package dashboard

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
)

// With --dashboard-export and no address, stopping the dashboard writes
// the report of the whole run: its requests, its last update marked done
// and the notes it was given; nothing is served.
func TestExportWritesTheRunsReportWhenStopped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.html")
	d, err := Listen(Config{Period: time.Hour, Export: path})
	if err != nil {
		t.Fatal(err)
	}
	if d.URL() != "" {
		t.Errorf("an export alone serves the dashboard at %s", d.URL())
	}
	progress := engine.Progress{Scenarios: []engine.ScenarioProgress{{Name: "chat", Phase: engine.PhaseRunning}}}
	c := NewCollector(time.Now(), func() engine.Progress { return progress }, nil)
	d.Start(c)
	tags := metrics.NewTagSet(map[string]string{"scenario": "chat"})
	for _, ok := range []bool{true, true, false} {
		c.AddRequest(record(tags, ok, 100))
	}
	d.Note("The run was interrupted.")
	d.Stop(context.Background())
	if w := d.ExportWarning(); w != "" {
		t.Fatalf("export warning %q", w)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report written: %v", err)
	}
	m := regexp.MustCompile(`(?s)const events = (.*?);\n`).FindSubmatch(page)
	var events []Event
	if m == nil || json.Unmarshal(m[1], &events) != nil || len(events) == 0 {
		t.Fatalf("the report holds no events:\n%s", page)
	}
	last := events[len(events)-1]
	if !last.Done || last.All.Requests != 3 || last.All.Failed != 1 || last.Scenarios[0].Name != "chat" {
		t.Errorf("the report's last update is %+v, want the run's end with its 3 requests, 1 failed", last)
	}
	if !strings.Contains(string(page), `const staticReport = {"notes":["The run was interrupted."]};`) {
		t.Error("the report does not carry its note")
	}
}

// An export that cannot be written fails before the run starts; a run
// that never started writes none.
func TestExportFileIsCheckedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"a directory", Config{Period: time.Second, Export: dir}, "dashboard export " + dir + ": cannot write there"},
		{"no such directory", Config{Period: time.Second, Export: filepath.Join(dir, "none", "r.html")}, "cannot write there"},
		{"the recording's file", Config{Period: time.Second, Export: filepath.Join(dir, "r.gz"), Record: filepath.Join(dir, "r.gz")}, "that is the recording's file too"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Listen(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Listen = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	path := filepath.Join(dir, "never.html")
	d, err := Listen(Config{Period: time.Second, Export: path})
	if err != nil {
		t.Fatal(err)
	}
	d.Stop(context.Background())
	if _, err := os.Stat(path); err == nil {
		t.Error("a dashboard stopped before it started wrote a report")
	}
}
