package llm

import (
	"cmp"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Record is what a run keeps of one request that ended (ok or failed;
// canceled requests are in no output): the one record every consumer of
// single requests reads — the per-request files (JSONL, CSV), InfluxDB's
// llm_request points and intervals, Prometheus, the timeline. It is made
// from the request's Result by Result.Record. Times are milliseconds, 0
// where not measured: a failed request has only E2E, and no tokens.
//
// Each figure's record tag names it in the per-request files, which write
// the figures in field order (RecordFields): adding a tagged field adds a
// column. The option "failed" marks a figure only failed requests have.
type Record struct {
	// Time is when the request ended.
	Time time.Time
	// Tags are the request's sample tags: scenario, model, group,
	// workload, turn and the script's own.
	Tags *metrics.TagSet
	OK   bool `record:"ok"`
	// Status is the HTTP status (0 when there was no response).
	Status int `record:"status"`
	// ErrorClass is the failure's class ("" when OK).
	ErrorClass string  `record:"error_class,failed"`
	TTFT       float64 `record:"ttft_ms"`
	TTFO       float64 `record:"ttfo_ms"`
	TPOT       float64 `record:"tpot_ms"`
	E2E        float64 `record:"e2e_ms"`
	// ITLMean and ITLP99 summarise the request's inter-token gaps (0 with
	// fewer than two token-bearing chunks).
	ITLMean      float64 `record:"itl_mean_ms"`
	ITLP99       float64 `record:"itl_p99_ms"`
	PromptTokens int     `record:"input_tokens"`
	OutputTokens int     `record:"output_tokens"`
	CachedTokens int     `record:"cached_tokens"`
	// ReasoningTokens is the reasoning share of OutputTokens: the
	// server's count when it gave one, else the reasoning-only chunks.
	ReasoningTokens int `record:"reasoning_tokens"`
	// ImageCount, ImageBytes and ImagePixels are what the request sent of
	// images (Result's), failed requests' too.
	ImageCount  int `record:"image_count"`
	ImageBytes  int `record:"image_bytes"`
	ImagePixels int `record:"image_pixels"`
	// gaps is the Result whose inter-token gaps ITLGaps yields while it
	// holds the attempt numbered attempt (Result.attempt).
	gaps    *Result
	attempt uint64
}

// attempts numbers the client's attempts (Client.attempt), from 1, so
// that a record tells its request's Result from the same Result reused
// for another request (StreamInto): the one process-wide counter, since
// a Result's own would start again when it is emptied.
var attempts atomic.Uint64

// ITLGaps yields each inter-token gap of a successful request, in ms,
// with how many gaps it stands for: 1 for each of the first 4096, a
// folded bucket's count beyond (as llm_itl counts them). The gaps are
// not copied into the record: they are read from the request's Result,
// which serves another request once the sinks' AddRequest returned. A
// copy of the record kept past AddRequest (the JSONL and InfluxDB queues
// keep some) yields no gaps once the Result holds another attempt:
// never another request's. Read it on the goroutine that called
// AddRequest, during the call.
func (r *Record) ITLGaps() iter.Seq2[float64, int64] {
	return func(yield func(float64, int64) bool) {
		if r.gaps == nil || r.gaps.attempt != r.attempt {
			return
		}
		for _, gap := range r.gaps.ITL {
			if !yield(gap, 1) {
				return
			}
		}
		for gap, n := range r.gaps.foldedGaps() {
			if !yield(gap, n) {
				return
			}
		}
	}
}

// Class is a failed request's error class, ErrUnknown when the failure
// has none; "" for a request that is OK.
func (r *Record) Class() string {
	if r.OK {
		return ""
	}
	return cmp.Or(r.ErrorClass, string(ErrUnknown))
}

// RecordField is one figure of a Record, as the per-request files name
// and write it.
type RecordField struct {
	// Name is its JSONL member and CSV column: "ttft_ms".
	Name string
	// Kind is its Go kind: reflect.Bool, Int, Float64 or String; read it
	// with the method of that name.
	Kind reflect.Kind
	// FailedOnly says that only failed requests have it (error_class).
	FailedOnly bool
	index      int
}

// recordFields are the figures of a Record, computed once.
var recordFields = newRecordFields()

// RecordFields returns the figures of a Record that have a record tag, in
// field order.
func RecordFields() []RecordField { return slices.Clone(recordFields) }

// newRecordFields reads Record's record tags. A tagged field of another
// kind than RecordField.Kind allows is a programming error: it panics, at
// package initialization.
func newRecordFields() []RecordField {
	var out []RecordField
	t := reflect.TypeFor[Record]()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("record")
		if !ok {
			continue
		}
		name, opt, _ := strings.Cut(tag, ",")
		switch k := f.Type.Kind(); {
		case k != reflect.Bool && k != reflect.Int && k != reflect.Float64 && k != reflect.String:
			panic(fmt.Sprintf("llm: Record.%s: a record figure cannot be a %s", f.Name, f.Type))
		case opt != "" && opt != "failed":
			panic(fmt.Sprintf("llm: Record.%s: unknown record tag option %q", f.Name, opt))
		default:
			out = append(out, RecordField{Name: name, Kind: k, FailedOnly: opt == "failed", index: i})
		}
	}
	return out
}

// Bool is the figure of r, of Kind reflect.Bool.
func (f *RecordField) Bool(r *Record) bool { return f.value(r).Bool() }

// Int is the figure of r, of Kind reflect.Int.
func (f *RecordField) Int(r *Record) int64 { return f.value(r).Int() }

// Float64 is the figure of r, of Kind reflect.Float64.
func (f *RecordField) Float64(r *Record) float64 { return f.value(r).Float() }

// String is the figure of r, of Kind reflect.String.
func (f *RecordField) String(r *Record) string { return f.value(r).String() }

func (f *RecordField) value(r *Record) reflect.Value { return reflect.ValueOf(r).Elem().Field(f.index) }

// Record fills rec with what outputs keep of the request, tagged tags;
// scratch is reused to find the ITL p99 and returned for the next call.
func (r *Result) Record(rec *Record, tags *metrics.TagSet, scratch []float64) []float64 {
	*rec = Record{Time: r.End(), Tags: tags, OK: r.OK, Status: r.Status, E2E: r.E2E,
		ImageCount: r.ImageCount, ImageBytes: r.ImageBytes, ImagePixels: r.ImagePixels}
	if !r.OK {
		// Every output writes the class Record.Class says.
		rec.ErrorClass = string(cmp.Or(r.Class, ErrUnknown))
		return scratch
	}
	rec.TTFT, rec.TTFO, rec.TPOT = r.TTFT, r.TTFO, r.TPOT
	rec.OutputTokens, rec.PromptTokens, rec.CachedTokens, rec.ReasoningTokens = r.OutputTokens, r.PromptTokens, r.CachedTokens, r.reasoningTokens()
	if r.itlCount() > 0 {
		rec.ITLMean = r.itlMean()
		rec.ITLP99, scratch = r.itlP99(scratch)
		rec.gaps, rec.attempt = r, r.attempt
	}
	return scratch
}

// RequestSink receives request records. AddRequest is called from every
// VU's goroutine, must be safe for concurrent use, and must never block for
// long: an output that cannot keep up drops and counts. The record is
// reused once AddRequest returns: a sink that keeps it keeps a copy.
type RequestSink interface {
	AddRequest(r *Record)
}

// ErrorRecorder collects the messages of failed requests, by error class,
// for the end-of-run summary, which shows the first few distinct messages
// of each class. Implementations keep bounded memory however many errors
// they are given, and are safe for concurrent use. Messages are already
// free of secrets (API keys, credential headers).
type ErrorRecorder interface {
	Record(class, message string)
}

// ArrivalCounters are a run's counters of arriving output tokens, one per
// scenario and model, sharded so that each VU counts into a shard of its
// own (by its ID) or shared with few others. Counter is safe for
// concurrent use; the module calls it only when a VU's scenario or model
// changes, never per token.
type ArrivalCounters interface {
	Counter(scenario, model string) *metrics.ShardedCounter
}

// TokenArrivals hands a request the counter of its model's output tokens
// (Request.Arrivals). Counter is called once per request, never per
// token, from the goroutine that sends it.
type TokenArrivals interface {
	Counter(model string) *metrics.CounterShard
}
