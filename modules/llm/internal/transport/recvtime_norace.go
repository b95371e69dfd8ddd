//go:build linux && !race

package transport

// raceAcquire does nothing without the race detector (see the race build).
func raceAcquire(uintptr) {}
