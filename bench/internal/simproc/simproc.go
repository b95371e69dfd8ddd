// Package simproc runs "llmrun sim" as a process of its own, for the
// benchmarks that measure a client against it: it builds the llmrun
// binary, starts the simulator and waits for the address it serves on,
// checks that the server there is the one it started (GET /stats names
// the instance id it gave), reads its counters from GET /stats, and
// stops it as Ctrl-C would.
package simproc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
)

// StartTimeout bounds how long the simulator may take to print the
// address it serves on; StopTimeout how long it may take to exit once
// interrupted.
const (
	StartTimeout = 30 * time.Second
	StopTimeout  = 30 * time.Second
)

// banner is the simulator's first line of output: the model it serves and
// the address it bound.
var banner = regexp.MustCompile(`serving model "([^"]*)" on (http://\S+)/v1 `)

// Build builds the llmrun binary of the module the working directory is
// in, into dir, and returns its path.
func Build(dir string) (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if root == "." || root == "" {
		return "", errors.New("run the benchmark inside the llmrun module (go run ./bench/...)")
	}
	bin := filepath.Join(dir, "llmrun")
	build := exec.Command("go", "build", "-o", bin, "./cmd/llmrun")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building llmrun: %v\n%s", err, out)
	}
	return bin, nil
}

// Proc is one "llmrun sim" process.
type Proc struct {
	URL   string // http://127.0.0.1:port
	Model string

	cmd    *exec.Cmd
	client *http.Client
	exited chan struct{} // closed once the process is reaped
	err    error         // Wait's error, read after exited is closed
	// stopOnce makes Stop idempotent; stopErr is its result.
	stopOnce sync.Once
	stopErr  error
}

// Start runs argv (a command line that ends in "llmrun sim ..."), its
// output going to stdout and stderr, and returns once it has printed the
// address it serves on and GET /stats there names the instance id Start
// gave it (--instance-id). A simulator that cannot bind its address
// exits, and Start returns that; a server at the address printed that is
// not the simulator started is an error too: a benchmark never measures
// whatever else listens there.
func Start(argv []string, stdout, stderr io.Writer) (*Proc, error) {
	id, err := instanceID()
	if err != nil {
		return nil, err
	}
	first := &firstLine{w: stdout, line: make(chan string, 1)}
	argv = append(slices.Clip(argv), "--instance-id", id)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = first, stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting llmrun sim: %w", err)
	}
	p := &Proc{cmd: cmd, client: &http.Client{Timeout: 5 * time.Second}, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	select {
	case line := <-first.line:
		m := banner.FindStringSubmatch(line)
		if m == nil {
			p.Stop()
			return nil, fmt.Errorf("llmrun sim's first line names no address: %q", line)
		}
		p.Model, p.URL = m[1], m[2]
		if err := p.identify(id); err != nil {
			p.Stop()
			return nil, err
		}
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("llmrun sim exited at start (%v)", p.err)
	case <-time.After(StartTimeout):
		p.Stop()
		return nil, fmt.Errorf("llmrun sim printed no address within %s", StartTimeout)
	}
}

// StartQuiet is Start with the simulator's output discarded, except that
// the error of a simulator that did not start says what it printed on
// stderr (an address it could not bind).
func StartQuiet(argv []string) (*Proc, error) {
	var stderr bytes.Buffer
	p, err := Start(argv, io.Discard, &stderr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return p, nil
}

// Exited is closed once the simulator has exited and its output has been
// written.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Pid is the simulator's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Stats reads the simulator's counters from GET /stats.
func (p *Proc) Stats(ctx context.Context) (llmsim.Stats, error) {
	var st llmsim.Stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/stats", nil)
	if err != nil {
		return st, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return st, fmt.Errorf("GET /stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /stats: status %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("GET /stats: %w", err)
	}
	return st, nil
}

// identify checks that the server at p.URL is the simulator started with
// the instance id id.
func (p *Proc) identify(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	st, err := p.Stats(ctx)
	if err != nil {
		return fmt.Errorf("the server at %s, which llmrun sim printed, is not the simulator started: %w", p.URL, err)
	}
	if st.InstanceID != id {
		return fmt.Errorf("the server at %s, which llmrun sim printed, is not the simulator started: GET /stats names instance %q, want %q", p.URL, st.InstanceID, id)
	}
	return nil
}

// instanceID is a name no other simulator has, for Start to give its own.
func instanceID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("drawing an instance id: %w", err)
	}
	return "simproc-" + hex.EncodeToString(b), nil
}

// Stop interrupts the simulator, as Ctrl-C would, and returns its exit
// error; it kills it if it has not exited within StopTimeout. Later calls
// return the first's result.
func (p *Proc) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.interrupt() })
	return p.stopErr
}

// interrupt is Stop, once.
func (p *Proc) interrupt() error {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(StopTimeout):
		p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("did not exit within %s of an interrupt and was killed", StopTimeout)
	}
}

// firstLine passes output on to w and sends its first line on line.
type firstLine struct {
	w    io.Writer
	line chan string
	mu   sync.Mutex
	buf  []byte
	sent bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	f.mu.Lock()
	if !f.sent {
		f.buf = append(f.buf, p...)
		if i := bytes.IndexByte(f.buf, '\n'); i >= 0 {
			f.line <- string(f.buf[:i])
			f.sent, f.buf = true, nil
		}
	}
	f.mu.Unlock()
	return f.w.Write(p)
}
