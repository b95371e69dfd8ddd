// Package runtime is llmrun's engine: it loads a script, resolves its
// scenarios, initialises one VU (one goja runtime) per concurrent user, runs
// the lifecycle (init, setup, scenarios, teardown) and hands the aggregated
// metrics to the summary. Executors, the JavaScript loader and outputs live
// in the sub-packages executor, js and output.
package runtime
