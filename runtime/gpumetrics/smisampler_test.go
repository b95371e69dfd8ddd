package gpumetrics

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeSMI writes an executable nvidia-smi into a new directory: a shell
// script running body, with $ARGS the file it may write its arguments to.
// It returns the script's path and the arguments file's.
func fakeSMI(t *testing.T, body string) (path, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "nvidia-smi")
	argsFile = filepath.Join(dir, "args")
	script := "#!/bin/sh\nARGS='" + argsFile + "'\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, argsFile
}

// polls starts a sampler on cfg whose polls arrive on the returned
// channel; it is stopped when the test ends.
func polls(t *testing.T, cfg SMIConfig) (*SMISampler, <-chan error) {
	t.Helper()
	results := make(chan error, 16)
	cfg.OnPoll = func(_ Reading, err error) { results <- err }
	if cfg.Interval == 0 {
		cfg.Interval = time.Hour // one run at the start, then only when poked
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second // room for a loaded machine
	}
	s, err := StartSMI(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s, results
}

func next(t *testing.T, results <-chan error) error {
	t.Helper()
	select {
	case err := <-results:
		return err
	case <-time.After(time.Minute):
		t.Fatal("no poll within a minute")
		return nil
	}
}

func TestSMISamplerRunsNvidiaSMI(t *testing.T) {
	recorded := withoutUnits(readTestdata(t, "nvidia-smi/h100-80gb-hbm3-590.48.01-load.csv"))
	path, argsFile := fakeSMI(t, `printf '%s\n' "$@" > "$ARGS"
cat <<'EOF'
`+recorded+`EOF`)
	s, results := polls(t, SMIConfig{Command: path})
	if err := next(t, results); err != nil {
		t.Fatal(err)
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	wantArgs := "--query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu,clocks.sm,clocks_event_reasons.active\n--format=csv,noheader,nounits\n"
	if string(args) != wantArgs {
		t.Errorf("nvidia-smi ran with\n%s\nwant\n%s", args, wantArgs)
	}
	s.Poke()
	if err := next(t, results); err != nil {
		t.Fatal(err)
	}
	readings := s.Readings()
	if len(readings) != 2 {
		t.Fatalf("%d readings, want 2", len(readings))
	}
	if readings[1].At.Before(readings[0].At) {
		t.Errorf("readings out of order: %v then %v", readings[0].At, readings[1].At)
	}
	if len(readings[1].GPUs) != 1 || *readings[1].GPUs[0].PowerW != 631.95 {
		t.Errorf("reading %s", describe(readings[1].GPUs[0]))
	}
	if counts, err := s.Failures(); len(counts) != 0 || err != nil {
		t.Errorf("failures %v, %v", counts, err)
	}
}

func TestSMISamplerOlderDriverFieldNames(t *testing.T) {
	// A driver that does not know a field refuses the query with
	// nvidia-smi's message for an unknown field; the sampler asks again
	// without it.
	tests := []struct {
		name    string
		refuses string
		asked   string
		row     string
		reasons string
	}{
		{
			name:    "knows only clocks_throttle_reasons.active",
			refuses: "clocks_event_reasons",
			asked:   ",clocks.sm,clocks_throttle_reasons.active\n",
			row:     "0, GPU-a, Tesla V100-SXM2-32GB, 97, 30210, 32768, 287.51, 66, 1530, 0x0000000000000004",
			reasons: "0x4",
		},
		{
			name:    "knows neither name",
			refuses: "clocks_*_reasons",
			asked:   ",clocks.sm\n",
			row:     "0, GPU-a, Tesla V100-SXM2-32GB, 97, 30210, 32768, 287.51, 66, 1530",
			reasons: "-",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, argsFile := fakeSMI(t, `case "$1" in
*`+tt.refuses+`*) echo "Field \"$1\" is not a valid field to query."; exit 2;;
esac
printf '%s\n' "$@" > "$ARGS"
echo '`+tt.row+`'`)
			s, results := polls(t, SMIConfig{Command: path})
			if err := next(t, results); err != nil {
				t.Fatal(err)
			}
			args, _ := os.ReadFile(argsFile)
			if !strings.Contains(string(args), tt.asked) {
				t.Errorf("nvidia-smi ran with %s, want a query ending %q", args, tt.asked)
			}
			r := s.Readings()
			if len(r) != 1 || len(r[0].GPUs) != 1 || !strings.HasSuffix(describe(r[0].GPUs[0]), "reasons="+tt.reasons) {
				t.Errorf("readings %+v, want one with reasons %s", r, tt.reasons)
			}
			if counts, _ := s.Failures(); len(counts) != 0 {
				t.Errorf("failures %v: a refused field is no failure", counts)
			}
		})
	}
}

func TestSMISamplerMissingCommand(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nvidia-smi")
	_, err := StartSMI(context.Background(), SMIConfig{Command: missing})
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "cannot be run") {
		t.Errorf("error %v, want one naming %s", err, missing)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = StartSMI(context.Background(), SMIConfig{})
	if err == nil || !strings.Contains(err.Error(), "nvidia-smi cannot be run") {
		t.Errorf("without nvidia-smi in PATH: error %v", err)
	}
}

func TestSMISamplerFailures(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		timeout time.Duration
		kind    string
		message string
	}{
		{
			name:    "the driver is not loaded",
			body:    `echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."; exit 9`,
			kind:    FailExit,
			message: "failed (exit status 9): NVIDIA-SMI has failed because it couldn't communicate",
		},
		{
			name:    "it hangs",
			body:    `exec sleep 600`,
			timeout: 100 * time.Millisecond,
			kind:    FailTimeout,
			message: "took longer than 100ms and was stopped",
		},
		{
			name:    "it prints something else",
			body:    `echo 'index, uuid'; echo '0, 1'`,
			kind:    FailOutput,
			message: "nvidia-smi output: record on line 1",
		},
		{
			name:    "it prints without end",
			body:    `exec yes 0, GPU-a, L40S, 9, 1235, 46068, 110.23, 54, 2520, 0x0`,
			kind:    FailOutput,
			message: "printed more than 1048576 bytes",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, _ := fakeSMI(t, tt.body)
			s, results := polls(t, SMIConfig{Command: path, Timeout: tt.timeout})
			err := next(t, results)
			if err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("error %v, want one saying %q", err, tt.message)
			}
			s.Poke()
			next(t, results)
			counts, last := s.Failures()
			if counts[tt.kind] != 2 || len(counts) != 1 || last == nil {
				t.Errorf("failures %v (last %v), want 2 of kind %s", counts, last, tt.kind)
			}
			if r := s.Readings(); len(r) != 0 {
				t.Errorf("%d readings kept from failed runs", len(r))
			}
		})
	}
}
