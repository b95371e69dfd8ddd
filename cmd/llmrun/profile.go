package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts the profiles a developer asks for in the
// environment (docs/performance.md): LLMRUN_CPUPROFILE, a CPU profile for
// go tool pprof, and LLMRUN_TRACE, an execution trace for go tool trace,
// each written to the path given, over the whole process. The returned
// function stops them and closes the files; it must run before exit.
func startProfiles(getenv func(string) string, stderr io.Writer) (stop func()) {
	var stops []func()
	start := func(name string, begin func(*os.File) error, end func()) {
		path := getenv(name)
		if path == "" {
			return
		}
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(stderr, "llmrun: %s: %v\n", name, err)
			return
		}
		if err := begin(f); err != nil {
			fmt.Fprintf(stderr, "llmrun: %s %s: %v\n", name, path, err)
			f.Close()
			return
		}
		stops = append(stops, func() {
			end()
			if err := f.Close(); err != nil {
				fmt.Fprintf(stderr, "llmrun: %s %s: %v\n", name, path, err)
			}
		})
	}
	start("LLMRUN_CPUPROFILE", func(f *os.File) error { return pprof.StartCPUProfile(f) }, pprof.StopCPUProfile)
	start("LLMRUN_TRACE", func(f *os.File) error { return trace.Start(f) }, trace.Stop)
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
