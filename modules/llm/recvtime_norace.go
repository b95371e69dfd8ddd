//go:build linux && !race

package llm

// raceAcquire does nothing without the race detector (see the race build).
func raceAcquire(uintptr) {}
