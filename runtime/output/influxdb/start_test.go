package influxdb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/refused"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Start refuses a wrong token, an unknown bucket and an unreachable
// server with errors that say what to fix and never show the token; a
// Finish after a failed Start still reports, at once.
func testStartErrors(t *testing.T, s *influxtest.Server) {
	const secret = "llmrun:not-the-password-0xC0FFEE"
	tests := []struct {
		name   string
		config func(*Config)
		want   []string
	}{
		{"wrong token", func(c *Config) { c.Token = secret }, []string{"refused the token in LLMRUN_INFLUXDB_TOKEN", "HTTP 401", s.URL, "user:password"}},
		{"no token", func(c *Config) { c.Token = "" }, []string{"wants a token", "HTTP 401", "set LLMRUN_INFLUXDB_TOKEN"}},
		{"unknown database", func(c *Config) { c.Bucket = "nope/autogen" }, []string{`bucket "nope/autogen" not found at ` + s.URL}},
		{"unreachable", func(c *Config) { c.URL = refused.URL(t) }, []string{"cannot reach InfluxDB at http://127.0.0.1:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(s)
			tt.config(&cfg)
			o := New(cfg)
			err := o.Start(context.Background(), testRun(t))
			if err == nil {
				t.Fatal("Start succeeded")
			}
			t.Logf("error: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "not-the-password") {
				t.Errorf("error %q shows the token", err)
			}
			begin := time.Now()
			o.AddRequest(okRecord("chat", time.Now()))
			rep := o.Finish(context.Background(), &summary.Summary{})
			if time.Since(begin) > time.Second {
				t.Errorf("Finish after a failed Start took %s", time.Since(begin))
			}
			if rep.Written != 0 || rep.Dropped != 3 || rep.Err != err.Error() || len(rep.Reasons) != 1 {
				t.Errorf("report %+v, want 3 dropped (the request, llm_run and llm_result) and the start error", rep)
			}
			for r := range rep.Reasons {
				if !strings.HasPrefix(r, "not written: the output did not start: influxdb: ") {
					t.Errorf("reason %q", r)
				}
			}
		})
	}
}
