// Package influxdb is the --out influxdb=URL output: every measured request
// as an llm_request point, periodic llm_interval aggregates, one llm_run
// point per run (and per scenario), the server section's window figures
// and series as llm_server and llm_server_series points, and the run's
// result file as llm_result points (gzipped, base64, in chunks), written
// asynchronously in batches with bounded memory to InfluxDB 2.x/3.x or
// 1.8+ (through its v2 compatibility API), with
// github.com/influxdata/influxdb-client-go/v2.
// The schema is fixed in docs/influxdb.md. History reads the llm_run
// points back for llmrun trend, ServerHistory the runs' server sections
// from their llm_server points, and ReadResults the result files of a
// run's instances for llmrun merge --influxdb, with InfluxQL over the v1
// /query API, which InfluxDB 1.x, 2.x (through a DBRP mapping) and 3.x
// answer, Flux or not.
//
// Start writes the llm_run_start point itself, which checks the URL, the
// bucket and the token before the run begins. From then on AddRequest
// never waits for the server: it updates the interval's aggregates and
// queues a copy of the record in a buffer of at most Config.Buffer points,
// which one writer goroutine sends in batches of up to Config.Batch. A
// write that fails for a reason that may pass (no answer, HTTP 5xx or
// 429) is retried with a jittered backoff from 100 ms to 5 s while the
// buffer keeps filling; points that find it full, batches InfluxDB
// rejects, and what Finish could not send within its flush timeout are
// dropped and counted, by reason, in the report.
package influxdb
