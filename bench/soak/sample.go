package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/bench/internal/procstat"
)

// sample is one reading of the client process and the run's progress.
type sample struct {
	at      time.Duration // since the client process started
	rssKiB  int64         // VmRSS
	hwmKiB  int64         // VmHWM: the peak RSS so far
	cpu     time.Duration // user + system CPU time so far
	threads int
	fds     int
	// records is the JSONL lines written so far: the requests ended.
	records int64
	// inFlight is the simulator's running plus waiting requests, -1 when
	// its /stats did not answer.
	inFlight int
}

func (s sample) rssMiB() float64 { return float64(s.rssKiB) / 1024 }

// readProc reads pid's memory, CPU time, threads and open files.
func readProc(pid int) (sample, error) {
	var s sample
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	if s.rssKiB, s.hwmKiB, err = parseStatus(status); err != nil {
		return s, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	if s.cpu, s.threads, err = procstat.ParseStat(stat); err != nil {
		return s, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return s, err
	}
	s.fds = len(fds)
	return s, nil
}

// parseStatus returns VmRSS and VmHWM, in KiB, from /proc/PID/status.
func parseStatus(b []byte) (rss, hwm int64, err error) {
	found := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("/proc status: unexpected %s line %q", key, line)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc status: %s: %w", key, err)
		}
		if key == "VmRSS" {
			rss = n
		} else {
			hwm = n
		}
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("/proc status: no VmRSS or VmHWM line (a zombie process?)")
	}
	return rss, hwm, nil
}

// lineCounter counts the lines of a file that grows, reading only what
// was appended since the last call.
type lineCounter struct {
	path  string
	off   int64
	lines int64
}

// update counts the lines appended since the last call; a file not yet
// created has none.
func (c *lineCounter) update() (int64, error) {
	f, err := os.Open(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return c.lines, nil
	}
	if err != nil {
		return c.lines, err
	}
	defer f.Close()
	if _, err := f.Seek(c.off, io.SeekStart); err != nil {
		return c.lines, err
	}
	buf := make([]byte, 256<<10)
	for {
		n, err := f.Read(buf)
		c.off += int64(n)
		c.lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if errors.Is(err, io.EOF) {
			return c.lines, nil
		}
		if err != nil {
			return c.lines, err
		}
	}
}

// watcher samples the client process every interval until it exits, and
// prints a timeline row every row.
type watcher struct {
	pid      int
	start    time.Time
	every    time.Duration
	row      time.Duration
	records  *lineCounter
	gc       *gcTrace
	inFlight func(context.Context) int
	out      io.Writer
}

// watch samples until the process is gone or ctx ends, and returns the
// samples.
func (w *watcher) watch(ctx context.Context) []sample {
	fmt.Fprintf(w.out, "%9s %9s %9s %9s %6s %8s %6s %10s %7s %9s\n",
		"time", "RSS MiB", "peak MiB", "heap MiB", "CPU %", "threads", "fds", "requests", "req/s", "sim busy")
	var samples []sample
	var last sample
	nextRow := w.row
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		s, err := w.take(ctx)
		if err != nil {
			return samples
		}
		samples = append(samples, s)
		if s.at >= nextRow {
			printRow(w.out, last, s, w.gc)
			last = s
			nextRow += w.row
		}
		select {
		case <-ctx.Done():
			return samples
		case <-t.C:
		}
	}
}

// take reads one sample; it fails once the process has exited.
func (w *watcher) take(ctx context.Context) (sample, error) {
	s, err := readProc(w.pid)
	if err != nil {
		return s, err
	}
	s.at = time.Since(w.start)
	s.records, _ = w.records.update()
	w.gc.update()
	s.inFlight = w.inFlight(ctx)
	return s, nil
}

// printRow prints the timeline row of cur, with rates since prev and the
// live heap after the latest collection.
func printRow(out io.Writer, prev, cur sample, gc *gcTrace) {
	span := (cur.at - prev.at).Seconds()
	cpu := 100 * (cur.cpu - prev.cpu).Seconds() / span
	rate := float64(cur.records-prev.records) / span
	busy, heap := "?", "?"
	if cur.inFlight >= 0 {
		busy = strconv.Itoa(cur.inFlight)
	}
	if h, ok := gc.last(); ok {
		heap = strconv.FormatFloat(h, 'f', 0, 64)
	}
	fmt.Fprintf(out, "%9s %9.1f %9.1f %9s %6.0f %8d %6d %10d %7.1f %9s\n",
		cur.at.Round(time.Second), cur.rssMiB(), float64(cur.hwmKiB)/1024, heap, cpu, cur.threads, cur.fds, cur.records, rate, busy)
}

// writeSamples writes every sample to a CSV file, for plotting.
func writeSamples(path string, samples []sample) error {
	var b strings.Builder
	b.WriteString("t_s,rss_kib,hwm_kib,cpu_s,threads,fds,requests,sim_in_flight\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%.1f,%d,%d,%.2f,%d,%d,%d,%d\n",
			s.at.Seconds(), s.rssKiB, s.hwmKiB, s.cpu.Seconds(), s.threads, s.fds, s.records, s.inFlight)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing the samples: %w", err)
	}
	return nil
}
