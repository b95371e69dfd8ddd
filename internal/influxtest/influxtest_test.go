package influxtest

import (
	"context"
	"strings"
	"testing"
)

// The harness's server takes writes with the admin's credentials, refuses
// wrong ones, and keeps its data across a restart.
func TestServer(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	if _, err := s.InfluxQL(ctx, `CREATE RETENTION POLICY "short" ON "llmrun" DURATION 1h REPLICATION 1`); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Restart()
	out, err := s.InfluxQL(ctx, `SHOW RETENTION POLICIES ON "llmrun"`)
	if err != nil || !strings.Contains(string(out), "short") {
		t.Fatalf("after a restart: %s %v", out, err)
	}
}
