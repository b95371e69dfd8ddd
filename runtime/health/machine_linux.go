//go:build linux

package health

// readMachine reads the machine's and this process's counters from procfs.
func readMachine() (procReading, error) { return readProc("/proc") }
