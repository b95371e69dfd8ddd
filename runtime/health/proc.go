package health

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procReading is one reading of Linux's cumulative counters: the
// machine's CPU times and load, and the run-queue times of llmrun's
// threads. Two readings bound a measurement.
type procReading struct {
	cpu  cpuTicks
	cpus int
	// load1 is the 1-minute load average.
	load1 float64
	// tasks are this process's threads' scheduler statistics, by thread
	// ID.
	tasks map[string]taskSched
}

// cpuTicks are the machine's CPU times from /proc/stat's aggregate "cpu"
// line, summed over its CPUs, in clock ticks.
type cpuTicks struct {
	// busy is user + nice + system + irq + softirq (guest time is already
	// in user and nice); idle is idle + iowait; steal is the time the
	// hypervisor ran something else while this machine's CPUs wanted to
	// run.
	busy, idle, steal uint64
}

// total is every tick the readings cover.
func (t cpuTicks) total() uint64 { return t.busy + t.idle + t.steal }

// taskSched is what the probe uses of one thread's /proc/…/schedstat,
// both cumulative.
type taskSched struct {
	// wait is the time the thread waited on a run queue, runnable but not
	// running, in ns; slices counts the times it was put on a CPU.
	wait, slices uint64
}

// readProc reads the counters under root, the mount point of procfs.
func readProc(root string) (procReading, error) {
	var r procReading
	statPath, loadPath := filepath.Join(root, "stat"), filepath.Join(root, "loadavg")
	stat, err := os.ReadFile(statPath)
	if err != nil {
		return r, err
	}
	if r.cpu, r.cpus, err = parseStat(string(stat)); err != nil {
		return r, fmt.Errorf("parsing %s: %w", statPath, err)
	}
	load, err := os.ReadFile(loadPath)
	if err != nil {
		return r, err
	}
	if r.load1, err = parseLoadavg(string(load)); err != nil {
		return r, fmt.Errorf("parsing %s: %w", loadPath, err)
	}
	r.tasks, err = readTasks(filepath.Join(root, "self", "task"))
	return r, err
}

// readTasks reads the schedstat of every thread in dir (/proc/self/task).
// Every thread counts, not /proc/self/schedstat alone: that file is the
// main thread's, while the Go runtime runs goroutines on several. A
// thread that exits while the directory is read is left out.
func readTasks(dir string) (map[string]taskSched, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing the threads: %w", err)
	}
	tasks := make(map[string]taskSched, len(entries))
	for _, e := range entries {
		path := filepath.Join(dir, e.Name(), "schedstat")
		text, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if tasks[e.Name()], err = parseSchedstat(string(text)); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", path, err)
		}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no thread in %s has a schedstat file: the kernel does not keep run-queue times", dir)
	}
	return tasks, nil
}

// parseStat reads /proc/stat: the aggregate cpu line (user nice system
// idle iowait irq softirq steal ...) and the number of per-CPU lines
// (cpu0, cpu1, ...), which is the number of online CPUs.
func parseStat(text string) (cpuTicks, int, error) {
	var ticks cpuTicks
	aggregate, cpus := false, 0
	for line := range strings.Lines(text) {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu"):
		case fields[0] == "cpu":
			t, err := parseCPULine(fields[1:])
			if err != nil {
				return cpuTicks{}, 0, fmt.Errorf("the cpu line: %w", err)
			}
			ticks, aggregate = t, true
		case isCPUName(fields[0]):
			cpus++
		}
	}
	if !aggregate {
		return cpuTicks{}, 0, errors.New("no aggregate cpu line")
	}
	if cpus == 0 {
		return cpuTicks{}, 0, errors.New("no per-CPU line")
	}
	return ticks, cpus, nil
}

// isCPUName says whether name is a per-CPU line's: "cpu" and a number.
func isCPUName(name string) bool {
	_, err := strconv.ParseUint(strings.TrimPrefix(name, "cpu"), 10, 32)
	return err == nil
}

// parseCPULine reads the times of /proc/stat's aggregate cpu line, after
// its name: at least user, nice, system, idle, iowait, irq, softirq and
// steal (every kernel since 2.6.11).
func parseCPULine(fields []string) (cpuTicks, error) {
	const user, nice, system, idle, iowait, irq, softirq, steal = 0, 1, 2, 3, 4, 5, 6, 7
	v, err := parseCounters(fields, steal+1)
	if err != nil {
		return cpuTicks{}, err
	}
	return cpuTicks{
		busy:  v[user] + v[nice] + v[system] + v[irq] + v[softirq],
		idle:  v[idle] + v[iowait],
		steal: v[steal],
	}, nil
}

// parseSchedstat reads a thread's schedstat: the time on a CPU (ns), the
// time waiting on a run queue (ns) and the number of time slices.
func parseSchedstat(text string) (taskSched, error) {
	const wait, slices = 1, 2
	v, err := parseCounters(strings.Fields(text), slices+1)
	if err != nil {
		return taskSched{}, err
	}
	return taskSched{wait: v[wait], slices: v[slices]}, nil
}

// parseLoadavg reads the 1-minute load average, the first field of
// /proc/loadavg.
func parseLoadavg(text string) (float64, error) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return 0, errors.New("empty")
	}
	load, err := strconv.ParseFloat(fields[0], 64)
	if err != nil || load < 0 || math.IsInf(load, 0) || math.IsNaN(load) {
		return 0, fmt.Errorf("the 1-minute load average %q is not a non-negative number", fields[0])
	}
	return load, nil
}

// parseCounters reads the first n fields as unsigned integers.
func parseCounters(fields []string, n int) ([]uint64, error) {
	if len(fields) < n {
		return nil, fmt.Errorf("%d fields, want at least %d", len(fields), n)
	}
	v := make([]uint64, n)
	for i := range v {
		var err error
		if v[i], err = strconv.ParseUint(fields[i], 10, 64); err != nil {
			return nil, fmt.Errorf("field %d: %w", i+1, err)
		}
	}
	return v, nil
}
