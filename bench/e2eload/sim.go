package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/llm/llmsim"
)

// simStartTimeout bounds how long the simulator may take to print the
// address it serves on; simStopTimeout how long it may take to exit.
const (
	simStartTimeout = 30 * time.Second
	simStopTimeout  = 30 * time.Second
)

// banner is the simulator's first line of output: the model it serves and
// the address it bound.
var banner = regexp.MustCompile(`serving model "([^"]*)" on (http://\S+)/v1 `)

// simulator is one "llmrun sim" process, which both clients of a stream
// count are measured against.
type simulator struct {
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:port
	model  string
	stderr bytes.Buffer
	exited chan error // receives Wait's result once
	client *http.Client
}

// startSimulator starts "llmrun sim" on addr (pinned by pin) and returns
// once it has printed the address it serves on. A simulator that cannot
// bind addr exits, and startSimulator returns its error: e2eload never
// measures whatever else listens there.
func startSimulator(bin, addr string, pin []string, args []string) (*simulator, error) {
	argv := append(append(append([]string{}, pin...), bin, "sim", "--addr", addr), args...)
	s := &simulator{exited: make(chan error, 1), client: &http.Client{Timeout: 10 * time.Second}}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stderr = &s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting llmrun sim: %w", err)
	}
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		first <- line
		io.Copy(io.Discard, r)
		s.exited <- s.cmd.Wait()
	}()
	select {
	case line := <-first:
		m := banner.FindStringSubmatch(line)
		if m == nil {
			s.stop()
			return nil, fmt.Errorf("llmrun sim did not start on %s: %q %s", addr, strings.TrimSpace(line), strings.TrimSpace(s.stderr.String()))
		}
		s.model, s.url = m[1], m[2]
		return s, nil
	case <-time.After(simStartTimeout):
		s.stop()
		return nil, fmt.Errorf("llmrun sim printed no address within %s", simStartTimeout)
	}
}

// stop interrupts the simulator as Ctrl-C would, and kills it when it has
// not exited within simStopTimeout.
func (s *simulator) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(simStopTimeout):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// stats reads the simulator's counters from GET /stats.
func (s *simulator) stats(ctx context.Context) (llmsim.Stats, error) {
	var st llmsim.Stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/stats", nil)
	if err != nil {
		return st, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return st, fmt.Errorf("GET /stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /stats: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("GET /stats: %w", err)
	}
	return st, nil
}

// cpu reads the simulator's user+system CPU time so far from /proc (0
// where there is no /proc).
func (s *simulator) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which ends with ')': utime and
	// stime are the 12th and 13th of them, in clock ticks (100 Hz).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}
