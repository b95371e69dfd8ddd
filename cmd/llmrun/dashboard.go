package main

import (
	"context"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
)

// dashboardCommand is "llmrun dashboard replay FILE": a recording served
// as the live dashboard served its run.
func dashboardCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newSubcommand("llmrun dashboard replay", dashboardUsage, stdout, stderr)
	fs := c.flags
	addr := fs.String("addr", dashboard.DefaultAddr, "address to serve the dashboard on (HOST:PORT)")
	speed := fs.Float64("speed", 1, "replay this many times faster than recorded; 0 sends every update at once")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if fs.NArg() != 2 || fs.Arg(0) != "replay" {
		return c.usageError("want: llmrun dashboard replay FILE")
	}
	if *speed < 0 {
		return c.usageError("--speed must not be negative, got %g", *speed)
	}
	events, err := dashboard.ReadRecording(fs.Arg(1))
	if err != nil {
		fmt.Fprintf(stderr, "llmrun dashboard replay: %v\n", err)
		return exitcode.Error
	}
	d, err := dashboard.Listen(dashboard.Config{Addr: *addr, Period: dashboard.DefaultPeriod})
	if err != nil {
		fmt.Fprintf(stderr, "llmrun dashboard replay: %v\n", err)
		return exitcode.Error
	}
	if w := dashboard.ExposureWarning("--addr", *addr); w != "" {
		fmt.Fprintf(stderr, "llmrun dashboard replay: %s\n", w)
	}
	fmt.Fprintf(stdout, "replaying %s (%d updates) at %s; Ctrl-C stops\n", fs.Arg(1), len(events), d.URL())
	d.Replay(ctx, events, *speed)
	return exitcode.OK
}
