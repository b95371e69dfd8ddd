package main

import "github.com/llmrun/llmrun/runtime/runner"

// verdictCodes are the exit codes of the runner's verdicts.
var verdictCodes = map[runner.Verdict]int{
	runner.Passed:           exitOK,
	runner.Errored:          exitError,
	runner.InvalidOutputs:   exitUsage,
	runner.ThresholdsFailed: exitThresholds,
	runner.InvalidConfig:    exitInvalidConfig,
	runner.Interrupted:      exitInterrupted,
	runner.ScriptError:      exitScriptError,
	runner.ThresholdAborted: exitThresholdAbort,
	runner.PreflightFailed:  exitPreflight,
	runner.EarlyStopped:     exitNoSuccess,
	runner.NoSuccess:        exitNoSuccess,
}

// outcomeCode is the exit code of a run's outcome.
func outcomeCode(o runner.Outcome) int {
	return exitCode(verdictCodes[o.Verdict], afterRun{scriptFailed: o.ScriptFailed, lost: o.Lost})
}

// afterRun is what went wrong once the run was over: handleSummary threw
// (or returned something it cannot be), or the summary, a result file or
// an output lost data.
type afterRun struct {
	scriptFailed, lost bool
}

// exitCode is a run's exit code from its verdict's and what went wrong
// after it, by the README's precedence: an interrupted or invalid run, or
// one whose script failed, keeps its code; a failed handleSummary (107)
// wins over the rest; then the early stop, an aborting threshold and no
// success keep theirs; a lost output (1) wins over a failed threshold (99)
// and success (0).
func exitCode(verdict int, after afterRun) int {
	switch {
	case verdict == exitInterrupted || verdict == exitInvalidConfig || verdict == exitScriptError:
		return verdict
	case after.scriptFailed:
		return exitScriptError
	case after.lost && (verdict == exitOK || verdict == exitThresholds):
		return exitError
	}
	return verdict
}
