// Command llmrun is a load and benchmark runner for LLM serving: it runs a
// JavaScript scenario against an OpenAI-compatible server (or its built-in
// simulator) and reports TTFT, TPOT, ITL, end-to-end latency, throughput and
// errors.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/gctune"
	"github.com/llmrun/llmrun/scripts"
)

func main() {
	ctx, stop := signalContext()
	defer stop()
	// The collector's heap goal is sized for a load generator unless the
	// user set GOGC (see runtime/gctune); it is process-wide, so it is set
	// here rather than by each run.
	gctune.Start(os.Getenv)
	stopProfiles := startProfiles(os.Getenv, os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stopProfiles()
	os.Exit(code)
}

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitcode.Usage
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "run":
		return runCommand(ctx, rest, stdout, stderr, getenv)
	case "bench":
		return benchCommand(ctx, rest, stdout, stderr, getenv)
	case "inspect":
		return inspectCommand(ctx, rest, stdout, stderr, getenv)
	case "sim":
		return simCommand(ctx, rest, stdout, stderr)
	case "dashboard":
		return dashboardCommand(ctx, rest, stdout, stderr)
	case "trend":
		return trendCommand(ctx, rest, stdout, stderr, getenv)
	case "compare":
		return compareCommand(ctx, rest, stdout, stderr, getenv)
	case "merge":
		return mergeCommand(ctx, rest, stdout, stderr, getenv)
	case "kube":
		return kubeCommand(ctx, rest, stdout, stderr, getenv)
	case "report":
		return reportCommand(ctx, rest, stdout, stderr, getenv)
	case "new":
		return newCommand(ctx, rest, stdout, stderr)
	case "types":
		return typesCommand(rest, stdout, stderr)
	case "version", "--version":
		if len(rest) > 0 && isHelpFlag(rest[0]) {
			fmt.Fprint(stdout, versionUsage)
			return exitcode.OK
		}
		bi, _ := debug.ReadBuildInfo()
		fmt.Fprint(stdout, versionText(bi))
		return exitcode.OK
	case "help", "-h", "--help":
		return helpCommand(ctx, cmd, rest, stdout, stderr, getenv)
	default:
		if strings.HasPrefix(cmd, "-") || strings.HasPrefix(cmd, scripts.Prefix) || looksLikeScript(cmd) {
			return runCommand(ctx, args, stdout, stderr, getenv)
		}
		return unknownCommand(cmd, stderr)
	}
}

// commands are the subcommands' names, for the nearest to a mistyped one.
var commands = []string{"run", "bench", "inspect", "sim", "trend", "compare", "merge", "kube", "report", "new", "types", "version", "help", "dashboard"}

func looksLikeScript(arg string) bool {
	for _, ext := range []string{".js", ".mjs", ".cjs", ".ts", ".mts"} {
		if strings.HasSuffix(arg, ext) {
			return true
		}
	}
	_, err := os.Stat(arg)
	return err == nil
}

// stopBackstop is how long after the first signal llmrun exits (105)
// whatever it is still doing. What runs after a signal is bounded well
// within it (engine.InterruptGrace for teardown and handleSummary), so
// only a stuck process reaches it.
const stopBackstop = 60 * time.Second

// signalContext is canceled by the first SIGINT, SIGTERM or SIGHUP, which
// stops the run and still prints its summary and writes its results; a
// second signal, or stopBackstop after the first, exits at once.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case sig := <-ch:
			// The terminal or the pipe reading stdout may be gone (a
			// closed SSH session, "| tee" killed by the same Ctrl-C): a
			// write to it must fail, not kill llmrun before its result
			// files are written.
			signal.Ignore(syscall.SIGPIPE)
			fmt.Fprintf(os.Stderr, "\nstopping: %s (%s to exit at once)\n", signalName(sig), again(sig))
			cancel()
		case <-finished:
			return
		}
		backstop := time.NewTimer(stopBackstop)
		select {
		case <-ch:
			fmt.Fprintln(os.Stderr, "exiting at once")
		case <-backstop.C:
			fmt.Fprintf(os.Stderr, "llmrun: still running %s after the signal: exiting at once\n", stopBackstop)
		case <-finished:
			return
		}
		os.Exit(exitcode.Interrupted)
	}()
	return ctx, func() { signal.Stop(ch); close(finished); cancel() }
}

// signalName is what stopped the run, in words.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "interrupted"
	case syscall.SIGHUP:
		return "hangup (SIGHUP)"
	default:
		return "terminated (SIGTERM)"
	}
}

// again says how to send the signal that exits at once.
func again(sig os.Signal) string {
	if sig == os.Interrupt {
		return "press Ctrl-C again"
	}
	return "send it again"
}
