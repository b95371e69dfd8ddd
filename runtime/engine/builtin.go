package engine

import "github.com/llmrun/llmrun/modules/metrics"

// builtinMetrics are the metrics the engine itself emits for every
// iteration.
type builtinMetrics struct {
	iterations        *metrics.Metric
	iterationDuration *metrics.Metric
	interrupted       *metrics.Metric
	scriptErrors      *metrics.Metric
	droppedIterations *metrics.Metric
	iterationLag      *metrics.Metric
	warmupIterations  *metrics.Metric
	warmupRequests    *metrics.Metric
	// llmRequests is the llm module's request counter, which warmup
	// iterations count as warmupRequests instead.
	llmRequests *metrics.Metric
}

func registerBuiltin(reg *metrics.Registry, llmRequests *metrics.Metric) *builtinMetrics {
	return &builtinMetrics{
		llmRequests: llmRequests,
		warmupIterations: reg.MustRegister(metrics.Metric{Name: "warmup_iterations", Type: metrics.Counter, Unit: "iterations",
			Desc: "warmup iterations, kept out of every other statistic"}),
		warmupRequests: reg.MustRegister(metrics.Metric{Name: "warmup_requests", Type: metrics.Counter, Unit: "requests",
			Desc: "LLM requests sent by warmup iterations, kept out of every other statistic"}),
		iterations: reg.MustRegister(metrics.Metric{Name: "iterations", Type: metrics.Counter, Unit: "iterations",
			Desc: "iterations that ran to their end (with or without an exception)"}),
		iterationDuration: reg.MustRegister(metrics.Metric{Name: "iteration_duration", Type: metrics.Trend, Contains: metrics.Time, Unit: "ms",
			Desc: "time to run one iteration of the scenario's function"}),
		interrupted: reg.MustRegister(metrics.Metric{Name: "iterations_interrupted", Type: metrics.Counter, Unit: "iterations",
			Desc: "iterations cut at the end of a graceful stop or by an abort; kept out of every other statistic"}),
		scriptErrors: reg.MustRegister(metrics.Metric{Name: "script_errors", Type: metrics.Counter, Unit: "errors",
			Desc: "iterations that ended with an uncaught exception"}),
		droppedIterations: reg.MustRegister(metrics.Metric{Name: "dropped_iterations", Type: metrics.Counter, Unit: "iterations",
			Desc: "arrival-rate iterations planned but not started: no VU was free and maxVUs were all busy, or the scenario ended while they waited for maxConcurrency"}),
		iterationLag: reg.MustRegister(metrics.Metric{Name: "iteration_lag", Type: metrics.Trend, Contains: metrics.Time, Unit: "ms",
			Desc: "client lag of arrival-rate iterations: actual start minus planned start"}),
	}
}
