// Package influxtest runs a real InfluxDB 1.8 server for tests, as
// net/http/httptest does for HTTP handlers: on 127.0.0.1, on ports it
// chooses itself (so no other test's server can be mistaken for it),
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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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
	version string // the binary's version, as X-Influxdb-Version names it
	dir     string
	config  string
	cmd     *exec.Cmd
	exited  chan struct{}
	logFile *os.File
	// logStart is where in logFile the output of the last start begins.
	logStart int64
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

// Launch runs the influxd bin with its data in dir, on a port of
// 127.0.0.1 it chooses itself, makes the admin user and the database, and
// returns the server; Close stops it.
func Launch(bin, dir string) (*Server, error) {
	return launch(bin, dir, "127.0.0.1:0")
}

// launch runs influxd with its HTTP API on httpAddr ("127.0.0.1:0" for a
// port of its own choosing), makes the admin user and the database, and
// returns the server.
func launch(bin, dir, httpAddr string) (*Server, error) {
	version, err := binaryVersion(bin)
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, version: version, Token: User + ":" + Password, Bucket: Database + "/autogen",
		config: filepath.Join(dir, "influxdb.conf")}
	if s.logFile, err = os.Create(filepath.Join(dir, "influxd.log")); err != nil {
		return nil, err
	}
	if err := s.start(httpAddr); err != nil {
		s.Close()
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

// binaryVersion is the version the influxd bin reports, as its HTTP API
// names it in the X-Influxdb-Version header: "1.8.10" for a release,
// "unknown" for one built with go install.
func binaryVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", bin, err)
	}
	m := versionLine.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s version printed no InfluxDB version: %q", bin, out)
	}
	return string(m[1]), nil
}

// versionLine is what `influxd version` prints: "InfluxDB v1.8.10 (git: 1.8 688e697c51)".
var versionLine = regexp.MustCompile(`^InfluxDB v(\S+)`)

// writeConfig writes influxd's configuration: its HTTP API on httpAddr,
// its RPC service on a port of its own choosing, and a log at level info,
// which names the address the HTTP API listens on.
func (s *Server) writeConfig(httpAddr string) error {
	conf := fmt.Sprintf(`reporting-disabled = true
bind-address = "127.0.0.1:0"
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[http]
  enabled = true
  bind-address = %q
  auth-enabled = true
  flux-enabled = false
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[logging]
  format = "logfmt"
  level = "info"
`, filepath.Join(s.dir, "meta"), filepath.Join(s.dir, "data"), filepath.Join(s.dir, "wal"), httpAddr)
	return os.WriteFile(s.config, []byte(conf), 0o600)
}

// start runs influxd with its HTTP API on httpAddr and returns once the
// server is known to be this influxd: its own log says it listens on the
// address, which no other process can then hold, and /ping there answers
// with the X-Influxdb-Version of the binary.
func (s *Server) start(httpAddr string) error {
	if err := s.writeConfig(httpAddr); err != nil {
		return err
	}
	var err error
	if s.logStart, err = s.logFile.Seek(0, io.SeekCurrent); err != nil {
		return err
	}
	watch := &listenWatch{w: s.logFile, addr: make(chan string, 1)}
	s.cmd = exec.Command(s.bin, "run", "-config", s.config)
	s.cmd.Stdout, s.cmd.Stderr = watch, watch
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("starting influxd: %w", err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		cmd.Wait()
		close(done)
	}(s.cmd, s.exited)
	timeout := time.NewTimer(startTimeout)
	defer timeout.Stop()
	select {
	case addr := <-watch.addr:
		s.URL = "http://" + addr
		if err := s.identify(); err != nil {
			s.Stop()
			return err
		}
		return nil
	case <-s.exited:
		s.cmd = nil
		if strings.Contains(s.log(), "address already in use") {
			return fmt.Errorf("influxd could not listen on %s, which %s", httpAddr, describe(httpAddr))
		}
		return fmt.Errorf("influxd exited at start; its log:\n%s", s.log())
	case <-timeout.C:
		s.Stop()
		return fmt.Errorf("influxd said within %s on no address that it listens; its log:\n%s", startTimeout, s.log())
	}
}

// startTimeout bounds how long influxd may take to listen.
const startTimeout = 30 * time.Second

// identify checks that the server at s.URL is the influxd s runs: /ping
// answers 204 with the binary's version in X-Influxdb-Version.
func (s *Server) identify() error {
	resp, err := identityClient.Get(s.URL + "/ping")
	if err != nil {
		return fmt.Errorf("influxd at %s: GET /ping: %w", s.URL, err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(versionHeader); resp.StatusCode != http.StatusNoContent || got != s.version {
		return fmt.Errorf("the server at %s is not the influxd started (%s): GET /ping answered %s with %s %q, want 204 No Content with %q",
			s.URL, s.bin, resp.Status, versionHeader, got, s.version)
	}
	return nil
}

// versionHeader is the header in which InfluxDB 1.x names its version on
// every response of its HTTP API.
const versionHeader = "X-Influxdb-Version"

// identityClient bounds the requests that check who answers.
var identityClient = &http.Client{Timeout: 10 * time.Second}

// describe says what answers GET /ping at addr, for the error of an
// influxd that found its address taken.
func describe(addr string) string {
	resp, err := identityClient.Get("http://" + addr + "/ping")
	if err != nil {
		return fmt.Sprintf("another process holds (GET /ping: %v)", err)
	}
	resp.Body.Close()
	if v := resp.Header.Get(versionHeader); v != "" {
		return fmt.Sprintf("another InfluxDB (%s %s) holds", versionHeader, v)
	}
	what := fmt.Sprintf("another server holds: GET /ping answers %s with no %s header", resp.Status, versionHeader)
	if server := resp.Header.Get("Server"); server != "" {
		what += fmt.Sprintf(" (Server %q)", server)
	}
	return what
}

// listenWatch passes influxd's output on to w and sends the address of
// its first "Listening on HTTP" line on addr.
type listenWatch struct {
	w    io.Writer
	addr chan string
	mu   sync.Mutex
	buf  []byte
	sent bool
}

// listeningOn is the line influxd logs once its HTTP API listens.
var listeningOn = regexp.MustCompile(`msg="Listening on HTTP" .*\baddr=(\S+)`)

func (l *listenWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	if !l.sent {
		l.buf = append(l.buf, p...)
		for {
			i := bytes.IndexByte(l.buf, '\n')
			if i < 0 {
				break
			}
			if m := listeningOn.FindSubmatch(l.buf[:i]); m != nil {
				l.addr <- string(m[1])
				l.sent, l.buf = true, nil
				break
			}
			l.buf = l.buf[i+1:]
		}
	}
	l.mu.Unlock()
	return l.w.Write(p)
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

// Restart starts a stopped server again, with its data, on its port. A
// port another process took meanwhile is an error that says what answers
// there: the test never talks to it.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("influxtest: Restart of a running server")
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return err
	}
	return s.start(u.Host)
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

// log is what influxd wrote since it was last started.
func (s *Server) log() string {
	b, _ := os.ReadFile(s.logFile.Name())
	return string(b[min(s.logStart, int64(len(b))):])
}
