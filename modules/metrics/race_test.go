//go:build race

package metrics

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop items at random, so allocation counts mean nothing under it.
const raceEnabled = true
