//go:build race

package main

// raceEnabled reports whether the race detector is on: it makes the tests
// CPU-bound, so TestMain leaves go test's parallelism as it is.
const raceEnabled = true
