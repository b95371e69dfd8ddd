// Package influxtest runs a real InfluxDB 1.8 server for tests, as
// net/http/httptest does for HTTP handlers: on 127.0.0.1, on free ports,
// with a temporary data directory, authentication on, one database, and
// Flux off: llmrun writes through the v2 compatibility API and reads
// through InfluxQL on /query, which every InfluxDB line answers, so its
// tests prove that nothing needs Flux.
//
// The server binary is found in $LLMRUN_INFLUXD, then as influxd on the
// PATH. `.ci/run` builds it (go install
// github.com/influxdata/influxdb/cmd/influxd@v1.8.10) and sets both
// LLMRUN_INFLUXD and LLMRUN_REQUIRE_INFLUXD=1, under which a missing server
// fails the test instead of skipping it.
package influxtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Credentials of the admin user every server is made with.
const (
	User     = "llmrun"
	Password = "llmrun-test-password"
	// Database is the database every server has; its v2 bucket is
	// "llmrun/autogen".
	Database = "llmrun"
)

// Server is a running influxd.
type Server struct {
	// URL is the HTTP API's base URL, http://127.0.0.1:PORT.
	URL string
	// Token is the v2 API token of the admin user, "user:password".
	Token string
	// Bucket is the database's v2 bucket name, "llmrun/autogen".
	Bucket string

	t       testing.TB
	bin     string
	dir     string
	config  string
	cmd     *exec.Cmd
	exited  chan struct{}
	logFile *os.File
}

// binary returns the influxd to run, or why there is none.
func binary() (string, error) {
	if p := os.Getenv("LLMRUN_INFLUXD"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("LLMRUN_INFLUXD=%s: %w", p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("influxd")
	if err != nil {
		return "", errors.New("no influxd: run the tests with .ci/run, which builds InfluxDB 1.8.10, or set LLMRUN_INFLUXD")
	}
	return p, nil
}

// Start starts a server for t and stops it when t ends. Without an influxd
// it skips t, or fails it when LLMRUN_REQUIRE_INFLUXD is set (in CI).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binary()
	if err != nil {
		if os.Getenv("LLMRUN_REQUIRE_INFLUXD") != "" {
			t.Fatalf("InfluxDB is required: %v", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	s := &Server{t: t, bin: bin, dir: dir, Token: User + ":" + Password, Bucket: Database + "/autogen"}
	httpPort, rpcPort := freePort(t), freePort(t)
	s.URL = "http://127.0.0.1:" + httpPort
	s.config = filepath.Join(dir, "influxdb.conf")
	conf := fmt.Sprintf(`reporting-disabled = true
bind-address = "127.0.0.1:%s"
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:%s"
  auth-enabled = true
  flux-enabled = false
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[logging]
  level = "warn"
`, rpcPort, filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), httpPort)
	if err := os.WriteFile(s.config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if s.logFile, err = os.Create(filepath.Join(dir, "influxd.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		s.logFile.Close()
	})
	s.start()
	// With no user yet, InfluxDB 1.8 accepts the statement that creates
	// the first admin; everything after needs the credentials.
	s.query("CREATE USER " + User + " WITH PASSWORD '" + Password + "' WITH ALL PRIVILEGES")
	s.query("CREATE DATABASE " + Database)
	return s
}

// start runs influxd and waits until it answers /health.
func (s *Server) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "run", "-config", s.config)
	s.cmd.Stdout, s.cmd.Stderr = s.logFile, s.logFile
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting influxd: %v", err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		cmd.Wait()
		close(done)
	}(s.cmd, s.exited)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-s.exited:
			s.t.Fatalf("influxd exited at start; its log:\n%s", s.log())
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("influxd did not answer /health within 30 s; its log:\n%s", s.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server (an outage); Restart starts it again on the same
// port and data.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Restart starts a stopped server again, with its data.
func (s *Server) Restart() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatal("influxtest: Restart of a running server")
	}
	s.start()
}

// query runs an InfluxQL statement as the admin (when one exists),
// failing the test on error.
func (s *Server) query(stmt string) {
	s.t.Helper()
	if _, err := s.InfluxQL(context.Background(), stmt); err != nil {
		s.t.Fatal(err)
	}
}

// InfluxQL runs an InfluxQL statement against the database with the admin
// credentials and returns the JSON response.
func (s *Server) InfluxQL(ctx context.Context, stmt string) ([]byte, error) {
	form := url.Values{"q": {stmt}, "db": {Database}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(User, Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("influxql %q: %w", stmt, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("influxql %q: %w", stmt, err)
	}
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"error"`) {
		return nil, fmt.Errorf("influxql %q: %s: %s", stmt, resp.Status, body)
	}
	return body, nil
}

func (s *Server) log() string {
	b, _ := os.ReadFile(s.logFile.Name())
	return string(b)
}

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
