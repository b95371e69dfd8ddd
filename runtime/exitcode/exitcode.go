// Package exitcode names llmrun's exit codes. Their doc comments are what
// docs/cli.md's "Exit codes" table says of each, and this comment's last
// paragraph is the text below it (generated from them: "Name: meaning.").
// Which one a run's outcome gets is runner.Outcome.ExitCode's table; the
// commands that are not runs (trend, compare, merge, report) use these
// names too.
//
// When several apply to a run, the first in this order wins: 105, 104 or
// 107, 111 (the early stop), 108, 111 (no success), 1 (an output lost
// data), 99. So a run whose results were not all stored never passes, and
// a failed threshold does not hide it. A Go program running the library
// gets the same code from runner.Outcome.ExitCode().
package exitcode

const (
	// OK: the run finished and some requests succeeded (failed requests
	// are results, not errors); for the other commands, they did their
	// job.
	OK = 0
	// Error: an error not covered below: the instances of a run did not
	// meet at the rendezvous, an output could not start (an InfluxDB that
	// refuses the token, a file that cannot be written there) or lost data
	// (a record or point dropped, a result file or report not written), or
	// a file a command reads could not be read or is not a result file.
	Error = 1
	// Usage: a bad command line (an unknown command or flag, a missing
	// script, a bad -e, two outputs naming one file).
	Usage = 2
	// Thresholds: a threshold failed (evaluated at the end of the run).
	Thresholds = 99
	// InvalidConfig: invalid options in the script or on the command
	// line; the message names the field.
	InvalidConfig = 104
	// Interrupted: stopped by a signal (Ctrl-C, SIGTERM, SIGHUP); the
	// summary is still printed and written, and a second signal exits at
	// once.
	Interrupted = 105
	// ScriptError: the script failed to load (a syntax error, an exception
	// in its init code, init code longer than --init-timeout), or its
	// setup(), teardown() or handleSummary() threw.
	ScriptError = 107
	// ThresholdAbort: an abortOnFail threshold failed and stopped the run
	// early (the summary is still printed).
	ThresholdAbort = 108
	// Regression: llmrun trend or compare found a figure that regressed
	// beyond the tolerance and the noise (or, with --strict, one that was
	// inconclusive).
	Regression = 109
	// Preflight: the preflight request failed in a way no load can fix
	// (refused, DNS, TLS, a 4xx, an unknown model, not an LLM API): nothing
	// was run.
	Preflight = 110
	// NoSuccess: no request succeeded, or the early stop stopped the run
	// (its first requests all failed alike, or the server stopped
	// answering); the summary is still printed and says why.
	NoSuccess = 111
	// MachineLimited: llmrun trend or compare has no verdict: nothing
	// credibly regressed, but a figure of a run its own machine limited
	// moved as a regression would.
	MachineLimited = 112
)
