package runner

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/js"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// Verdict is how a run ended, before what went wrong after it (see
// Outcome). verdictCodes gives each its exit code (EarlyStopped and
// NoSuccess share 111), as docs/cli.md lists them.
type Verdict int

const (
	// Passed: the run ran, a request succeeded and no threshold failed.
	Passed Verdict = iota
	// Errored: the simulator or an output could not start, or a file
	// to write cannot be written.
	Errored
	// InvalidOutputs: an output was named wrongly, or two name one file.
	InvalidOutputs
	// ThresholdsFailed: a threshold failed.
	ThresholdsFailed
	// InvalidConfig: invalid options in the script or the configuration.
	InvalidConfig
	// Interrupted: ctx was cancelled.
	Interrupted
	// ScriptError: the script failed to load, or its setup or teardown
	// threw.
	ScriptError
	// ThresholdAborted: an abortOnFail threshold failed and stopped the
	// run.
	ThresholdAborted
	// PreflightFailed: a target failed the preflight in a way no load can
	// fix; nothing was run.
	PreflightFailed
	// EarlyStopped: the early stop stopped the run (failing requests
	// only).
	EarlyStopped
	// NoSuccess: no request succeeded.
	NoSuccess
)

var verdictNames = [...]string{
	Passed: "passed", Errored: "errored", InvalidOutputs: "invalid outputs", ThresholdsFailed: "thresholds failed",
	InvalidConfig: "invalid config", Interrupted: "interrupted", ScriptError: "script error",
	ThresholdAborted: "aborted by a threshold", PreflightFailed: "preflight failed", EarlyStopped: "stopped early",
	NoSuccess: "no success",
}

// verdictCodes are the exit codes of the verdicts.
var verdictCodes = [...]int{
	Passed:           exitcode.OK,
	Errored:          exitcode.Error,
	InvalidOutputs:   exitcode.Usage,
	ThresholdsFailed: exitcode.Thresholds,
	InvalidConfig:    exitcode.InvalidConfig,
	Interrupted:      exitcode.Interrupted,
	ScriptError:      exitcode.ScriptError,
	ThresholdAborted: exitcode.ThresholdAbort,
	PreflightFailed:  exitcode.Preflight,
	EarlyStopped:     exitcode.NoSuccess,
	NoSuccess:        exitcode.NoSuccess,
}

// ExitCode is the verdict's exit code, before what went wrong after the
// run (Outcome.ExitCode).
func (v Verdict) ExitCode() int {
	if v < 0 || int(v) >= len(verdictCodes) {
		return exitcode.Error
	}
	return verdictCodes[v]
}

// ExitCode is the run's exit code, by runtime/exitcode's precedence: an
// interrupted or invalid run, or one whose script failed, keeps its
// verdict's code; a failed handleSummary (107) wins over the rest; then
// the early stop, an aborting threshold and no success keep theirs; a
// lost output (1) wins over a failed threshold (99) and success (0).
func (o Outcome) ExitCode() int {
	switch code := o.Verdict.ExitCode(); {
	case code == exitcode.Interrupted || code == exitcode.InvalidConfig || code == exitcode.ScriptError:
		return code
	case o.ScriptFailed:
		return exitcode.ScriptError
	case o.Lost && (code == exitcode.OK || code == exitcode.Thresholds):
		return exitcode.Error
	default:
		return code
	}
}

func (v Verdict) String() string {
	if v < 0 || int(v) >= len(verdictNames) {
		return fmt.Sprintf("Verdict(%d)", int(v))
	}
	return verdictNames[v]
}

// verdict is a finished run's verdict, by precedence: interrupted,
// invalid options or a script error, stopped by the early stop, aborted
// by a threshold, no successful request, a failed threshold; Passed
// otherwise. It says on stderr, in lines begun with command, why a run
// did not pass, where the summary does not, and repeats there a warning
// that few requests succeeded (Summary.LowSuccess), which changes no
// verdict.
func verdict(ctx context.Context, rep *engine.Report, runErr error, sum *summary.Summary, stderr io.Writer, command string) Verdict {
	if sum != nil && sum.LowSuccess != "" {
		fmt.Fprintf(stderr, "\n%s: WARNING: %s\n", command, sum.LowSuccess)
	}
	switch {
	case ctx.Err() != nil:
		for _, err := range besidesInterruption(runErr) {
			fmt.Fprintf(stderr, "\n%s: %v\n", command, err)
		}
		return Interrupted
	case runErr != nil:
		fmt.Fprintf(stderr, "\n%s: %v\n", command, runErr)
		var cfgErr *engine.ConfigError
		if errors.As(runErr, &cfgErr) {
			return InvalidConfig
		}
		return ScriptError
	case rep.EarlyStopped != nil:
		fmt.Fprintf(stderr, "\n%s: stopped early: %s\n", command, rep.EarlyStopped)
		return EarlyStopped
	case rep.AbortedBy != nil:
		return ThresholdAborted
	}
	if why := sum.NoSuccess(); why != "" {
		fmt.Fprintf(stderr, "\n%s: %s: a run without a successful request does not pass (see the errors in the summary)\n", command, why)
		return NoSuccess
	}
	if threshold.AnyFailed(rep.Thresholds) {
		return ThresholdsFailed
	}
	return Passed
}

// besidesInterruption lists the errors of an interrupted run other than
// the interruption itself (a teardown() cut after its grace period). It
// leaves runErr as it was: the slice a joined error unwraps to is its own.
func besidesInterruption(runErr error) []error {
	var errs []error
	for _, err := range failures(runErr) {
		if !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	return errs
}

// ReportLoadError prints an error of loading a script (engine.Load, or
// the options the runner reads) under the command's name (cmd) and
// returns its verdict: InvalidConfig, Interrupted or ScriptError.
func ReportLoadError(stderr io.Writer, cmd, script string, err error) Verdict {
	var scriptErr *js.ScriptError
	var cfgErr *engine.ConfigError
	var initTimeout *engine.InitTimeoutError
	switch {
	case errors.As(err, &cfgErr):
		fmt.Fprintf(stderr, "%s: %s: %v\n", cmd, script, err)
		return InvalidConfig
	case errors.As(err, &initTimeout):
		fmt.Fprintf(stderr, "%s: %s: %v\n", cmd, script, err)
		return ScriptError
	case errors.As(err, &scriptErr):
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return ScriptError
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "%s: interrupted before the test started\n", cmd)
		return Interrupted
	default:
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return ScriptError
	}
}
