//go:build race

package llmsim

// raceEnabled reports whether the race detector is on; it slows the host
// too much for load timing to mean anything.
const raceEnabled = true
