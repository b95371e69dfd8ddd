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
// go tool pprof, LLMRUN_TRACE, an execution trace for go tool trace, and
// LLMRUN_MEMPROFILE, a heap profile (what the process allocated, and what
// was live at its last collection), each written to the path given, over
// the whole process. The returned function stops them and closes the
// files; it must run before exit.
func startProfiles(getenv func(string) string, stderr io.Writer) (stop func()) {
	var stops []func()
	start := func(name string, begin func(io.Writer) error, end func(io.Writer) error) {
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
			if err := end(f); err != nil {
				fmt.Fprintf(stderr, "llmrun: %s %s: %v\n", name, path, err)
			}
			if err := f.Close(); err != nil {
				fmt.Fprintf(stderr, "llmrun: %s %s: %v\n", name, path, err)
			}
		})
	}
	start("LLMRUN_CPUPROFILE", pprof.StartCPUProfile, stopping(pprof.StopCPUProfile))
	start("LLMRUN_TRACE", trace.Start, stopping(trace.Stop))
	start("LLMRUN_MEMPROFILE", func(io.Writer) error { return nil }, func(w io.Writer) error { return pprof.Lookup("heap").WriteTo(w, 0) })
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// stopping is stop as the end of a profile that has nothing to write.
func stopping(stop func()) func(io.Writer) error {
	return func(io.Writer) error {
		stop()
		return nil
	}
}
