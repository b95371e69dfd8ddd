// Package exitcode names llmrun's exit codes, as the README's "Exit
// codes" table lists them. Which one a run's outcome gets, and which wins
// when several apply, is runner.Outcome.ExitCode's table; the commands
// that are not runs (trend, compare, merge, report) use these names too.
package exitcode

const (
	// OK: the run finished and some requests succeeded.
	OK = 0
	// Error: an error not covered below (an output that could not start
	// or lost data, an unwritable file, instances that did not meet).
	Error = 1
	// Usage: a bad command line.
	Usage = 2
	// Thresholds: a threshold failed.
	Thresholds = 99
	// InvalidConfig: invalid options in the script or on the command
	// line.
	InvalidConfig = 104
	// Interrupted: stopped by a signal (Ctrl-C, SIGTERM, SIGHUP).
	Interrupted = 105
	// ScriptError: the script failed to load, or its
	// setup/teardown/handleSummary threw.
	ScriptError = 107
	// ThresholdAbort: an abortOnFail threshold failed and stopped the run.
	ThresholdAbort = 108
	// Regression: llmrun trend (or compare) found a regression.
	Regression = 109
	// Preflight: the preflight request failed in a way no load can fix:
	// nothing was run.
	Preflight = 110
	// NoSuccess: no request succeeded, or the early stop stopped the run.
	NoSuccess = 111
	// MachineLimited: llmrun trend (or compare) has no verdict: a
	// machine-limited figure moved as a regression would.
	MachineLimited = 112
)
