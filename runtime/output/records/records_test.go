package records

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/output"
)

// testRecords are an ok request with every figure, and a failed one.
func testRecords() []llm.Record {
	end := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CET", 3600))
	return []llm.Record{
		{
			Time: end,
			Tags: metrics.NewTagSet(map[string]string{"scenario": "chat", "model": "llama-3", "group": "::g", "env": `a"b\c`}),
			OK:   true, Status: 200,
			TTFT: 123.456, TTFO: 120.5, TPOT: 12.25, E2E: 987.654321,
			ITLMean: 11.5, ITLP99: 30.125,
			OutputTokens: 64, PromptTokens: 512, CachedTokens: 256, ReasoningTokens: 8,
			ImageCount: 2, ImageBytes: 315000, ImagePixels: 524288,
		},
		{
			Time: end.Add(time.Second),
			Tags: metrics.NewTagSet(map[string]string{"scenario": "chat", "model": "llama-3"}),
			OK:   false, ErrorClass: "http_5xx", Status: 503,
			E2E: 5.5,
		},
	}
}

// startOutput starts an output of format f on a file in a temporary
// directory, with a queue of queue records, and returns it with the path.
func startOutput(t *testing.T, f Format, queue int) (*Output, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "requests."+f.String())
	o := newOutput(f, path, queue)
	if err := o.Start(context.Background(), output.Run{ID: "r1"}); err != nil {
		t.Fatal(err)
	}
	return o, path
}

// jsonlLine is a JSONL line as encoding/json reads it back.
type jsonlLine struct {
	Time       time.Time         `json:"time"`
	Scenario   string            `json:"scenario"`
	Model      string            `json:"model"`
	Tags       map[string]string `json:"tags"`
	OK         bool              `json:"ok"`
	Status     int               `json:"status"`
	ErrorClass *string           `json:"error_class"`
	TTFT       float64           `json:"ttft_ms"`
	TTFO       float64           `json:"ttfo_ms"`
	TPOT       float64           `json:"tpot_ms"`
	E2E        float64           `json:"e2e_ms"`
	ITLMean    float64           `json:"itl_mean_ms"`
	ITLP99     float64           `json:"itl_p99_ms"`
	Input      int               `json:"input_tokens"`
	Output     int               `json:"output_tokens"`
	Cached     int               `json:"cached_tokens"`
	Reasoning  int               `json:"reasoning_tokens"`
	Images     int               `json:"image_count"`
	ImageBytes int               `json:"image_bytes"`
	Pixels     int               `json:"image_pixels"`
}

func TestJSONLWritesEveryRecordInOrder(t *testing.T) {
	o, path := startOutput(t, JSONL, DefaultQueue)
	recs := testRecords()
	for i := range recs {
		o.AddRequest(&recs[i])
	}
	rep := o.Finish(context.Background(), nil)
	if rep.Output != "jsonl "+path || rep.Written != 2 || rep.Dropped != 0 || rep.Err != "" {
		t.Fatalf("report %+v", rep)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), b)
	}
	var got [2]jsonlLine
	for i, l := range lines {
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got[i]); err != nil {
			t.Fatalf("line %d %s: %v", i+1, l, err)
		}
	}
	ok := jsonlLine{
		Time: recs[0].Time, Scenario: "chat", Model: "llama-3", Tags: map[string]string{"group": "::g", "env": `a"b\c`},
		OK: true, Status: 200, TTFT: 123.456, TTFO: 120.5, TPOT: 12.25, E2E: 987.654321, ITLMean: 11.5, ITLP99: 30.125,
		Input: 512, Output: 64, Cached: 256, Reasoning: 8, Images: 2, ImageBytes: 315000, Pixels: 524288,
	}
	class := "http_5xx"
	failed := jsonlLine{Time: recs[1].Time, Scenario: "chat", Model: "llama-3", Tags: map[string]string{}, Status: 503, ErrorClass: &class, E2E: 5.5}
	for i, want := range []jsonlLine{ok, failed} {
		g := got[i]
		if !g.Time.Equal(want.Time) || g.Time.Location() != time.UTC {
			t.Errorf("line %d: time %v, want %v in UTC", i+1, g.Time, want.Time)
		}
		if deref(g.ErrorClass) != deref(want.ErrorClass) {
			t.Errorf("line %d: error_class %s, want %s", i+1, deref(g.ErrorClass), deref(want.ErrorClass))
		}
		g.Time, g.ErrorClass, want.ErrorClass = want.Time, nil, nil
		if !reflect.DeepEqual(g, want) {
			t.Errorf("line %d:\n got %+v\nwant %+v", i+1, g, want)
		}
	}
	if want := `{"time":"2026-03-04T04:06:07.123456789Z","scenario":"chat","model":"llama-3","tags":{"env":"a\"b\\c","group":"::g"},"ok":true,"status":200,"ttft_ms":123.456,`; !strings.HasPrefix(lines[0], want) {
		t.Errorf("line 1 %s\ndoes not start with %s", lines[0], want)
	}
	if strings.Contains(lines[0], "error_class") {
		t.Errorf("an ok line has an error_class: %s", lines[0])
	}
}

// deref is *p, "<nil>" for nil.
func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestCSVWritesAHeaderAndEveryRecordInOrder(t *testing.T) {
	o, path := startOutput(t, CSV, DefaultQueue)
	recs := testRecords()
	for i := range recs {
		o.AddRequest(&recs[i])
	}
	rep := o.Finish(context.Background(), nil)
	if rep.Output != "csv "+path || rep.Written != 2 || rep.Dropped != 0 || rep.Err != "" {
		t.Fatalf("report %+v", rep)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"time", "scenario", "model", "tags", "ok", "status", "error_class", "ttft_ms", "ttfo_ms", "tpot_ms", "e2e_ms",
			"itl_mean_ms", "itl_p99_ms", "input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens",
			"image_count", "image_bytes", "image_pixels"},
		{"2026-03-04T04:06:07.123456789Z", "chat", "llama-3", `env=a"b\c;group=::g`, "true", "200", "",
			"123.456", "120.5", "12.25", "987.654321", "11.5", "30.125", "512", "64", "256", "8", "2", "315000", "524288"},
		{"2026-03-04T04:06:08.123456789Z", "chat", "llama-3", "", "false", "503", "http_5xx",
			"0", "0", "0", "5.5", "0", "0", "0", "0", "0", "0", "0", "0", "0"},
	}
	if fmt.Sprintf("%q", rows) != fmt.Sprintf("%q", want) {
		t.Errorf("rows\n%q\nwant\n%q", rows, want)
	}
}

// Records added from many goroutines at once all reach the file, each
// goroutine's in its order.
func TestConcurrentRecordsAllLand(t *testing.T) {
	const goroutines, each = 100, 1000
	o, path := startOutput(t, JSONL, goroutines*each)
	tags := metrics.NewTagSet(map[string]string{"scenario": "s", "model": "m"})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			var r llm.Record // reused, as the VUs do
			for i := range each {
				r = llm.Record{Time: time.Now(), Tags: tags, OK: true, Status: g, OutputTokens: i}
				o.AddRequest(&r)
			}
		})
	}
	wg.Wait()
	rep := o.Finish(context.Background(), nil)
	if rep.Written != goroutines*each || rep.Dropped != 0 {
		t.Fatalf("report %+v", rep)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	next := make([]int, goroutines)
	n := 0
	for l := range strings.Lines(string(b)) {
		var got jsonlLine
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d %q: %v", n+1, l, err)
		}
		if got.Output != next[got.Status] {
			t.Fatalf("goroutine %d: record %d, want %d", got.Status, got.Output, next[got.Status])
		}
		next[got.Status]++
		n++
	}
	if n != goroutines*each {
		t.Errorf("%d lines, want %d", n, goroutines*each)
	}
}

// Records that find the queue full are dropped and counted with the
// reason.
func TestFullQueueDropsAndCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	o := newOutput(JSONL, path, 4)
	recs := testRecords()
	for range 10 { // before Start, so that nothing is written meanwhile
		o.AddRequest(&recs[0])
	}
	if err := o.Start(context.Background(), output.Run{}); err != nil {
		t.Fatal(err)
	}
	rep := o.Finish(context.Background(), nil)
	reason := "queue full (4 records): writing " + path + " did not keep up"
	if rep.Written != 4 || rep.Dropped != 6 || rep.Reasons[reason] != 6 || len(rep.Reasons) != 1 {
		t.Fatalf("report %+v", rep)
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 4 {
		t.Errorf("%d lines, want 4", n)
	}
}

// A file that cannot be created fails Start with an error naming it; the
// report says the queued records were not written.
func TestStartFailsOnAnUnwritablePath(t *testing.T) {
	for _, f := range []Format{JSONL, CSV} {
		path := filepath.Join(t.TempDir(), "no-such-dir", "r."+f.String())
		o, err := New(f, path)
		if err != nil {
			t.Fatal(err)
		}
		recs := testRecords()
		o.AddRequest(&recs[0])
		err = o.Start(context.Background(), output.Run{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("%s: Start error %v, want one naming %s", f, err, path)
		}
		rep := o.Finish(context.Background(), nil)
		if rep.Written != 0 || rep.Dropped != 1 || rep.Err == "" || len(rep.Reasons) != 1 {
			t.Errorf("%s: report %+v", f, rep)
		}
	}
	if _, err := New(JSONL, ""); err == nil || !strings.Contains(err.Error(), "--out jsonl=") {
		t.Errorf("New with no file: %v", err)
	}
}

// devFull is /dev/full, a device that opens and refuses every write as a
// full disk does; the test is skipped where there is none.
func devFull(t *testing.T) string {
	const full = "/dev/full"
	f, err := os.OpenFile(full, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no %s: %v", full, err)
	}
	f.Close()
	return full
}

// A write error (a full disk) stops the writing; every record is dropped
// with it, and the report carries it.
func TestWriteErrorDropsTheRest(t *testing.T) {
	full := devFull(t)
	o := newOutput(JSONL, full, DefaultQueue)
	if err := o.Start(context.Background(), output.Run{}); err != nil {
		t.Fatal(err)
	}
	recs := testRecords()
	for range 3 {
		o.AddRequest(&recs[0])
	}
	rep := o.Finish(context.Background(), nil)
	if rep.Written != 0 || rep.Dropped != 3 || !strings.Contains(rep.Err, "no space left on device") {
		t.Fatalf("report %+v", rep)
	}
	for reason, n := range rep.Reasons {
		if n != 3 || !strings.HasPrefix(reason, "write error: ") {
			t.Errorf("reason %q × %d", reason, n)
		}
	}
	if err := newOutput(CSV, full, 1).Start(context.Background(), output.Run{}); err == nil || !strings.Contains(err.Error(), full) {
		t.Errorf("CSV's header on %s: %v", full, err)
	}
}

// A write error is told through the run's Warn within the flush
// interval of the record that met it, while the run goes, not only in
// the report at its end. The bubble's clock makes that interval exact.
func TestWriteErrorIsToldAtOnce(t *testing.T) {
	full := devFull(t)
	synctest.Test(t, func(t *testing.T) {
		warnings := make(chan string, 4)
		o := newOutput(JSONL, full, DefaultQueue)
		if err := o.Start(context.Background(), output.Run{Warn: func(m string) { warnings <- m }}); err != nil {
			t.Fatal(err)
		}
		recs := testRecords()
		o.AddRequest(&recs[0])
		time.Sleep(flushInterval)
		synctest.Wait()
		select {
		case m := <-warnings:
			want := "output jsonl /dev/full: write error: write /dev/full: no space left on device; its later records are dropped and counted, the run goes on"
			if m != want {
				t.Errorf("warning %q, want %q", m, want)
			}
		default:
			t.Fatalf("no warning %s after the record", flushInterval)
		}
		o.AddRequest(&recs[0])
		rep := o.Finish(context.Background(), nil)
		if rep.Dropped != 2 || len(warnings) != 0 {
			t.Errorf("report %+v, %d more warnings; want 2 dropped and one warning", rep, len(warnings))
		}
	})
}

// Lines reach the file while the run goes, within the flush interval. The
// bubble's clock makes that interval exact, however busy the machine.
func TestRecordsStreamWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o, path := startOutput(t, JSONL, DefaultQueue)
		defer o.Finish(context.Background(), nil)
		recs := testRecords()
		o.AddRequest(&recs[0])
		time.Sleep(flushInterval)
		synctest.Wait()
		if b, _ := os.ReadFile(path); bytes.Count(b, []byte("\n")) != 1 {
			t.Fatalf("%d lines in %s after %s, want 1", bytes.Count(b, []byte("\n")), path, flushInterval)
		}
	})
}

// A finish that gives up drops what is left, with the reason.
func TestFinishThatGivesUpDrops(t *testing.T) {
	o, _ := startOutput(t, JSONL, DefaultQueue)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	recs := testRecords()
	for range 100 {
		o.AddRequest(&recs[0])
	}
	rep := o.Finish(ctx, nil)
	if rep.Written+rep.Dropped != 100 {
		t.Fatalf("report %+v", rep)
	}
	for reason := range rep.Reasons {
		if !strings.Contains(reason, "Finish gave up") {
			t.Errorf("reason %q", reason)
		}
	}
	if again := o.Finish(context.Background(), nil); fmt.Sprint(again) != fmt.Sprint(rep) {
		t.Errorf("second Finish %+v, first %+v", again, rep)
	}
}

func TestFinishWithoutStart(t *testing.T) {
	o, err := New(CSV, filepath.Join(t.TempDir(), "r.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs := testRecords()
	o.AddRequest(&recs[1])
	rep := o.Finish(context.Background(), nil)
	if rep.Dropped != 1 || rep.Reasons["not written: the output was not started"] != 1 {
		t.Errorf("report %+v", rep)
	}
}

// BenchmarkAddRequest measures what a VU pays per request, from many
// goroutines at once, while the writer writes to a file.
func BenchmarkAddRequest(b *testing.B) {
	for _, f := range []Format{JSONL, CSV} {
		b.Run(f.String(), func(b *testing.B) {
			o := newOutput(f, filepath.Join(b.TempDir(), "r"), DefaultQueue)
			if err := o.Start(context.Background(), output.Run{}); err != nil {
				b.Fatal(err)
			}
			recs := testRecords()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := recs[0]
				for pb.Next() {
					o.AddRequest(&r)
				}
			})
			b.StopTimer()
			rep := o.Finish(context.Background(), nil)
			b.ReportMetric(float64(rep.Dropped)/float64(b.N), "dropped/op")
		})
	}
}

// BenchmarkEncode measures the writer's cost per record.
func BenchmarkEncode(b *testing.B) {
	for _, f := range []Format{JSONL, CSV} {
		b.Run(f.String(), func(b *testing.B) {
			enc := newEncoder(f)
			recs := testRecords()
			var line []byte
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				line = enc.record(line[:0], &recs[i%2])
			}
			b.SetBytes(int64(len(line)))
		})
	}
}

// BenchmarkQueuePush measures AddRequest's queueing path alone, with a
// consumer that takes and recycles chunks as fast as it can, so that few
// records find the queue full.
func BenchmarkQueuePush(b *testing.B) {
	q := newQueue(DefaultQueue, "full")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var chunks [][]llm.Record
		for {
			select {
			case <-stop:
				return
			case <-q.ready:
			}
			chunks = q.take(chunks[:0])
			for _, c := range chunks {
				q.recycle(c)
			}
		}
	}()
	recs := testRecords()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := recs[0]
		for pb.Next() {
			q.push(&r)
		}
	})
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(q.close("").Dropped)/float64(b.N), "dropped/op")
}

// The files' bytes are pinned: member and column names, their order,
// number formatting and escaping are the schema readers rely on.
func TestEncodedBytes(t *testing.T) {
	recs := testRecords()
	odd := recs[0]
	odd.TTFT, odd.TPOT, odd.Tags = math.NaN(), math.Inf(1), nil
	recs = append(recs, odd)
	tests := []struct {
		f    Format
		want string
	}{
		{JSONL, `{"time":"2026-03-04T04:06:07.123456789Z","scenario":"chat","model":"llama-3","tags":{"env":"a\"b\\c","group":"::g"},"ok":true,"status":200,"ttft_ms":123.456,"ttfo_ms":120.5,"tpot_ms":12.25,"e2e_ms":987.654321,"itl_mean_ms":11.5,"itl_p99_ms":30.125,"input_tokens":512,"output_tokens":64,"cached_tokens":256,"reasoning_tokens":8,"image_count":2,"image_bytes":315000,"image_pixels":524288}
{"time":"2026-03-04T04:06:08.123456789Z","scenario":"chat","model":"llama-3","tags":{},"ok":false,"status":503,"error_class":"http_5xx","ttft_ms":0,"ttfo_ms":0,"tpot_ms":0,"e2e_ms":5.5,"itl_mean_ms":0,"itl_p99_ms":0,"input_tokens":0,"output_tokens":0,"cached_tokens":0,"reasoning_tokens":0,"image_count":0,"image_bytes":0,"image_pixels":0}
{"time":"2026-03-04T04:06:07.123456789Z","scenario":"","model":"","tags":{},"ok":true,"status":200,"ttft_ms":null,"ttfo_ms":120.5,"tpot_ms":null,"e2e_ms":987.654321,"itl_mean_ms":11.5,"itl_p99_ms":30.125,"input_tokens":512,"output_tokens":64,"cached_tokens":256,"reasoning_tokens":8,"image_count":2,"image_bytes":315000,"image_pixels":524288}
`},
		{CSV, `time,scenario,model,tags,ok,status,error_class,ttft_ms,ttfo_ms,tpot_ms,e2e_ms,itl_mean_ms,itl_p99_ms,input_tokens,output_tokens,cached_tokens,reasoning_tokens,image_count,image_bytes,image_pixels
2026-03-04T04:06:07.123456789Z,chat,llama-3,"env=a""b\c;group=::g",true,200,,123.456,120.5,12.25,987.654321,11.5,30.125,512,64,256,8,2,315000,524288
2026-03-04T04:06:08.123456789Z,chat,llama-3,,false,503,http_5xx,0,0,0,5.5,0,0,0,0,0,0,0,0,0
2026-03-04T04:06:07.123456789Z,,,,true,200,,NaN,120.5,+Inf,987.654321,11.5,30.125,512,64,256,8,2,315000,524288
`},
	}
	for _, tc := range tests {
		enc := newEncoder(tc.f)
		got := enc.header(nil)
		for i := range recs {
			got = enc.record(got, &recs[i])
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.f, got, tc.want)
		}
	}
}
