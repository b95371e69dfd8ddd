//go:build !linux

package health

import (
	"fmt"
	"runtime"
)

// readMachine reports that the machine's counters are not read on this
// platform: they come from Linux's procfs.
func readMachine() (procReading, error) {
	return procReading{}, fmt.Errorf("not measured on %s", runtime.GOOS)
}
