// Package results finds, reads, merges and re-judges finished runs'
// results, from files, logs and InfluxDB: what llmrun merge, trend,
// report and compare call.
//
// A result is the result document (runtime/summary) a run wrote: a result
// file, a block of a log (runtime/output/logblock), or the llm_result
// points of InfluxDB (runtime/output/influxdb). Source.Read reads the
// results of one merge within one budget; Set.Merge merges them
// and judges a sweep's capacity again on the merged figures; Trend reads a
// test's runs stored in InfluxDB, gathering the instances of a run into
// one; Compare judges a result against a baseline; ApplySLO judges a
// sweep again against another objective. Each judgement is a
// regression.Report for the caller to print.
package results
