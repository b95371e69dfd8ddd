package influxtest

import (
	"context"
	"io"
	"net/http"
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
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	out, err := s.InfluxQL(ctx, `SHOW RETENTION POLICIES ON "llmrun"`)
	if err != nil || !strings.Contains(string(out), "short") {
		t.Fatalf("after a restart: %s %v", out, err)
	}
}

// The server answers no Flux query, so the tests that read it prove that
// llmrun does not need Flux.
func TestFluxDisabled(t *testing.T) {
	s := Start(t)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+"/api/v2/query",
		strings.NewReader(`from(bucket: "llmrun/autogen") |> range(start: -1h)`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/vnd.flux")
	req.Header.Set("Authorization", "Token "+s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "Flux query service disabled") {
		t.Errorf("a Flux query: %s %s; want 403 Flux query service disabled", resp.Status, body)
	}
}
