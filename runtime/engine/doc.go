// Package engine runs a script: it loads it, resolves its scenarios,
// initialises one VU (one goja runtime) per concurrent user, runs the
// lifecycle (init, setup, scenarios, teardown) and returns a Report of the
// aggregated metrics. It knows nothing of what consumes a run: the summary,
// the timeline and the outputs are packages beside it, under runtime/.
package engine
