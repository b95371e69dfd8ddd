package main

import (
	"context"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
)

// dashboardCommand is "llmrun dashboard replay FILE", a recording served
// as the live dashboard served its run, and "llmrun dashboard report
// FILE", a recording written as one HTML file.
func dashboardCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newSubcommand("llmrun dashboard", dashboardUsage, stdout, stderr)
	fs := c.flags
	addr := fs.String("addr", dashboard.DefaultAddr, "replay: address to serve the dashboard on (HOST:PORT)")
	speed := fs.Float64("speed", 1, "replay: this many times faster than recorded; 0 sends every update at once")
	out := fs.StringP("output", "o", "", "report: the HTML file to write (default: FILE's name without .gz, with .html)")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if fs.NArg() != 2 || fs.Arg(0) != "replay" && fs.Arg(0) != "report" {
		return c.usageError("want: llmrun dashboard replay FILE, or llmrun dashboard report FILE")
	}
	if fs.Arg(0) == "report" {
		if fs.Changed("addr") || fs.Changed("speed") {
			return c.usageError("--addr and --speed are replay's; report writes a file")
		}
		return dashboardReport(c, fs.Arg(1), *out, stdout)
	}
	if fs.Changed("output") {
		return c.usageError("-o is report's; replay serves the recording")
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

// dashboardReport writes the report of the recording in to out.
func dashboardReport(c *subcommand, in, out string, stdout io.Writer) int {
	if c.flags.Changed("output") && out == "" {
		return c.usageError("-o: want a file name")
	}
	if out == "" {
		out = dashboard.ReportName(in)
	}
	warning, err := dashboard.WriteReport(in, out)
	if warning != "" {
		fmt.Fprintf(c.stderr, "llmrun dashboard report: warning: %s\n", warning)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "llmrun dashboard report: %v\n", err)
		return exitcode.Error
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return exitcode.OK
}
