// Package procstat reads what the benchmarks measure of a process from
// Linux's /proc and from a finished process's resource usage: its CPU
// time, its threads and its peak resident set.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// ParseStat returns the user + system CPU time and the thread count from
// /proc/PID/stat.
func ParseStat(b []byte) (cpu time.Duration, threads int, err error) {
	// The fields after the command name, which ends with the last ')',
	// start at field 3 (state): utime, stime and num_threads are fields
	// 14, 15 and 20.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 18 {
		return 0, 0, fmt.Errorf("/proc stat: %d fields after the command name, want at least 18", len(f))
	}
	var n [3]int64
	for j, field := range []int{14, 15, 20} {
		if n[j], err = strconv.ParseInt(f[field-3], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc stat: field %d: %w", field, err)
		}
	}
	return time.Duration(n[0]+n[1]) * clockTick, int(n[2]), nil
}

// CPU is a running process's user + system CPU time so far; false where
// there is no /proc to read it from.
func CPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	cpu, _, err := ParseStat(b)
	return cpu, err == nil
}

// PeakRSS is a finished process's peak resident set, in KiB; 0 where the
// system does not report it.
func PeakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
