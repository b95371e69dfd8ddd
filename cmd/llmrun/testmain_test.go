package main

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/llmrun/llmrun/internal/race"
)

// minParallel is how many tests of this package run at once unless
// -parallel says otherwise. They mostly wait on the simulator's GPU time
// and on timers (about 15 s of CPU in 90 s of tests on 2 cores), not on a
// CPU, so go test's default of GOMAXPROCS leaves the machine idle. Tests
// that measure timing, and the examples with their latency thresholds
// (TestExamplesRun), are not parallel. Under the race detector the tests
// are CPU-bound, so the default stays.
const minParallel = 8

// asMainEnv, set to 1 in its environment, makes this test binary run as
// llmrun itself: the tests that send signals start it so.
const asMainEnv = "LLMRUN_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit && !race.Enabled {
		if err := flag.Set("test.parallel", strconv.Itoa(max(minParallel, runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
