package influxtest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim"
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

// decoy starts the built-in simulator on addr: it answers /health with
// 200, as influxd does, and is the server a test found on influxd's port
// when another test's simulator took it.
func decoy(t *testing.T, addr string) *llmsim.Running {
	t.Helper()
	sim, err := llmsim.Listen(t.Context(), addr, llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim
}

// A simulator that took the port of a stopped server while it was down is
// not taken for it: Restart fails, naming what answers there, and succeeds
// once the port is free again, with the server's data.
func TestRestartRefusesAnImpostor(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	if _, err := s.InfluxQL(ctx, `CREATE RETENTION POLICY "kept" ON "llmrun" DURATION 1h REPLICATION 1`); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	addr := strings.TrimPrefix(s.URL, "http://")
	sim := decoy(t, addr)
	err := s.Restart()
	if err == nil {
		t.Fatalf("Restart with the simulator on %s succeeded; the test would talk to the simulator", addr)
	}
	if want := "influxd could not listen on " + addr + ", which another server holds: GET /ping answers 404 Not Found with no X-Influxdb-Version header"; !strings.Contains(err.Error(), want) {
		t.Errorf("Restart: %v\nwant it to say %q", err, want)
	}
	sim.Close()
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart once the port is free again: %v", err)
	}
	if out, err := s.InfluxQL(ctx, `SHOW RETENTION POLICIES ON "llmrun"`); err != nil || !strings.Contains(string(out), "kept") {
		t.Fatalf("after the restart: %s %v", out, err)
	}
}

// An influxd told to listen where another server listens (the
// simulator, or another test's influxd) fails to start, naming what holds
// the address, instead of handing the test that server.
func TestLaunchRefusesAnImpostor(t *testing.T) {
	other := Start(t)
	bin, _ := Binary()
	tests := []struct {
		name, url, want string
	}{
		{"simulator", decoy(t, "127.0.0.1:0").URL(), "another server holds: GET /ping answers 404 Not Found with no X-Influxdb-Version header"},
		{"influxd", other.URL, "another InfluxDB (X-Influxdb-Version " + other.version + ") holds"},
	}
	for _, tt := range tests {
		addr := strings.TrimPrefix(tt.url, "http://")
		s, err := launch(bin, t.TempDir(), addr)
		if err == nil {
			s.Close()
			t.Errorf("%s: launch on its address %s succeeded", tt.name, addr)
			continue
		}
		if want := "influxd could not listen on " + addr + ", which " + tt.want; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: launch: %v\nwant it to say %q", tt.name, err, want)
		}
	}
}

// Who answers is checked by X-Influxdb-Version on /ping: the simulator,
// which answers /health with 200, is refused, and so is an influxd of
// another version than the binary started.
func TestIdentify(t *testing.T) {
	real := Start(t)
	sim := decoy(t, "127.0.0.1:0")
	tests := []struct {
		url, version, want string
	}{
		{real.URL, real.version, ""},
		{sim.URL(), real.version, "GET /ping answered 404 Not Found with X-Influxdb-Version \"\""},
		{real.URL, "0.0.0-other", "GET /ping answered 204 No Content with X-Influxdb-Version \"" + real.version + "\", want 204 No Content with \"0.0.0-other\""},
	}
	for _, tt := range tests {
		err := (&Server{URL: tt.url, version: tt.version}).identify()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("identify %s as version %q: %v; want %q", tt.url, tt.version, err, tt.want)
		}
	}
}
