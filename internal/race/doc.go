// Package race tells a test whether the race detector is built in. It
// instruments every memory access (a test's CPU time grows several
// times, its memory too) and makes sync.Pool drop items at random
// (allocation counts mean nothing), and it can report a race only where
// two goroutines share memory. A test whose point is an allocation
// count, a memory bound or a size skips under it:
//
//	if race.Enabled {
//		t.Skip("why the race detector adds nothing: TestX covers the same code")
//	}
//
// naming the test that covers the same code, under the race detector
// when one does, else the skipped test itself, which go test runs
// without -race (internal/architecture's TestRaceSkipsNameTheirCover
// checks the name).
package race
