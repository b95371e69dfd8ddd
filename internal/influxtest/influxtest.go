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

	bin     string
	dir     string
	config  string
	cmd     *exec.Cmd
	exited  chan struct{}
	logFile *os.File
}

// Binary returns the influxd to run, or why there is none.
func Binary() (string, error) {
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
	bin, err := Binary()
	if err != nil {
		if os.Getenv("LLMRUN_REQUIRE_INFLUXD") != "" {
			t.Fatalf("InfluxDB is required: %v", err)
		}
		t.Skip(err)
	}
	s, err := Launch(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// launchAttempts bounds how often Launch picks new ports when influxd
// finds one taken: a port free when picked can be taken before influxd
// binds it (by another test's connection) on a busy machine.
const launchAttempts = 5

// Launch runs the influxd bin with its data in dir, on free ports of
// 127.0.0.1, makes the admin user and the database, and returns the
// server; Close stops it.
func Launch(bin, dir string) (*Server, error) {
	var s *Server
	var err error
	for range launchAttempts {
		s, err = launchOnce(bin, dir)
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	// With no user yet, InfluxDB 1.8 accepts the statement that creates
	// the first admin; everything after needs the credentials.
	for _, stmt := range []string{"CREATE USER " + User + " WITH PASSWORD '" + Password + "' WITH ALL PRIVILEGES", "CREATE DATABASE " + Database} {
		if _, err := s.InfluxQL(context.Background(), stmt); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// errPortTaken is an influxd that exited at start because one of its
// ports was taken.
var errPortTaken = errors.New("a port influxd was given is taken")

// launchOnce runs influxd on two ports free now.
func launchOnce(bin, dir string) (*Server, error) {
	s := &Server{bin: bin, dir: dir, Token: User + ":" + Password, Bucket: Database + "/autogen"}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	httpPort, rpcPort := ports[0], ports[1]
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
		return nil, err
	}
	if s.logFile, err = os.Create(filepath.Join(dir, "influxd.log")); err != nil {
		return nil, err
	}
	if err := s.start(); err != nil {
		s.Close()
		if strings.Contains(s.log(), "address already in use") {
			return nil, fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, err
	}
	return s, nil
}

// start runs influxd and waits until it answers /health.
func (s *Server) start() error {
	s.cmd = exec.Command(s.bin, "run", "-config", s.config)
	s.cmd.Stdout, s.cmd.Stderr = s.logFile, s.logFile
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("starting influxd: %w", err)
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
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("influxd exited at start; its log:\n%s", s.log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("influxd did not answer /health within 30 s; its log:\n%s", s.log())
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

// Close stops the server for good and closes its log.
func (s *Server) Close() {
	s.Stop()
	if s.logFile != nil {
		s.logFile.Close()
	}
}

// Restart starts a stopped server again, with its data.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("influxtest: Restart of a running server")
	}
	return s.start()
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

// freePorts returns n distinct TCP ports free on 127.0.0.1 now.
func freePorts(n int) ([]string, error) {
	ports := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		// Held until all are picked, so that they differ.
		defer l.Close()
		_, port, _ := net.SplitHostPort(l.Addr().String())
		ports = append(ports, port)
	}
	return ports, nil
}
