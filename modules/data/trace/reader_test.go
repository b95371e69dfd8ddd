package trace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// readAll reads every record of r.
func readAll(t *testing.T, r *Reader) []Record {
	t.Helper()
	var recs []Record
	for {
		rec, err := r.Next(context.Background())
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}

func TestReadsEachFormatsSample(t *testing.T) {
	tests := []struct {
		file   string
		format Format
		first  Record
		second Record
		last   time.Duration
	}{
		{"mooncake.jsonl", Mooncake,
			Record{Index: 0, InputTokens: 3335, OutputTokens: 405, HashIDs: []int64{0, 1, 2, 3, 100, 101, 102}},
			Record{Index: 1, Start: 2666 * time.Millisecond, InputTokens: 2495, OutputTokens: 75, HashIDs: []int64{0, 1, 2, 3, 107}},
			46545 * time.Millisecond},
		{"azure2023.csv", Azure,
			Record{Index: 0, InputTokens: 3070, OutputTokens: 628},
			Record{Index: 1, Start: 2056279 * time.Microsecond, InputTokens: 5231, OutputTokens: 605},
			57053853 * time.Microsecond},
		{"azure2024.csv", Azure,
			Record{Index: 0, InputTokens: 4831, OutputTokens: 249},
			Record{Index: 1, Start: 141269 * time.Microsecond, InputTokens: 6042, OutputTokens: 39},
			4716464 * time.Microsecond},
		{"burstgpt.csv", BurstGPT,
			Record{Index: 0, InputTokens: 99, OutputTokens: 584, Fields: map[string]any{"Model": "ChatGPT", "Total tokens": "683", "Log Type": "Conversation log"}},
			Record{Index: 1, Start: 3 * time.Second, InputTokens: 1737, OutputTokens: 421, Fields: map[string]any{"Model": "GPT-4", "Total tokens": "2158", "Log Type": "API log"}},
			491 * time.Second},
		{"generic.jsonl", JSONL,
			Record{Index: 0, InputTokens: 645, OutputTokens: 350, HashIDs: []int64{0, 1}, Fields: map[string]any{"user": "u4", "priority": 1.0}},
			Record{Index: 1, Start: 459 * time.Millisecond, InputTokens: 917, OutputTokens: 247, HashIDs: []int64{0, 1}, Fields: map[string]any{"user": "u1", "priority": 1.0}},
			6831 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := Open(filepath.Join("testdata", tt.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Format() != tt.format {
				t.Errorf("detected %q, want %q", r.Format(), tt.format)
			}
			recs := readAll(t, r)
			if len(recs) != 30 {
				t.Fatalf("%d records, want 30", len(recs))
			}
			if got := fmt.Sprint(recs[0]); got != fmt.Sprint(tt.first) {
				t.Errorf("first record\n got %s\nwant %s", got, fmt.Sprint(tt.first))
			}
			if got := fmt.Sprint(recs[1]); got != fmt.Sprint(tt.second) {
				t.Errorf("second record\n got %s\nwant %s", got, fmt.Sprint(tt.second))
			}
			if last := recs[len(recs)-1]; last.Start != tt.last || last.Index != 29 {
				t.Errorf("last record #%d starts at %s, want #29 at %s", last.Index, last.Start, tt.last)
			}
		})
	}
}

func TestAFormatGivenWinsOverDetection(t *testing.T) {
	// A Mooncake line that also has a timestamp_ms key would be detected
	// as jsonl; the format given reads it as Mooncake.
	src := `{"timestamp": 5, "timestamp_ms": 1, "input_length": 7, "output_length": 3}` + "\n"
	r, err := NewReader(strings.NewReader(src), "t.jsonl", Options{Format: Mooncake})
	if err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, r)
	if len(recs) != 1 || recs[0].InputTokens != 7 || recs[0].Fields["timestamp_ms"] != 1.0 {
		t.Fatalf("read %+v", recs)
	}
}

func TestBadInputNamesFileLineAndField(t *testing.T) {
	tests := []struct {
		name, src string
		format    Format
		want      string
	}{
		{"empty", "\n\n", "", "t: the trace is empty"},
		{"unknown header", "a,b,c\n1,2,3\n", "", "t:1: cannot tell the trace's format"},
		{"unknown format", "{}\n", "parquet", `unknown trace format "parquet"`},
		{"json without known keys", `{"x": 1}` + "\n", "", `t:1: a JSON line with neither`},
		{"not json", `{"timestamp": 1, "input_length": 2, "output_length": 3}` + "\nnope\n", Mooncake, "t:2: not a JSON object"},
		{"missing field", `{"timestamp": 1, "input_length": 2}` + "\n", "", `t:1: "output_length" is missing`},
		{"bad number", `{"timestamp_ms": "soon", "input_tokens": 2, "output_tokens": 3}` + "\n", "", `t:1: "timestamp_ms": not a number: "soon"`},
		{"negative count", `{"timestamp_ms": 0, "input_tokens": -2, "output_tokens": 3}` + "\n", "", `t:1: "input_tokens": -2 is not a token count`},
		{"fractional count", `{"timestamp_ms": 0, "input_tokens": 2.5, "output_tokens": 3}` + "\n", "", `t:1: "input_tokens": 2.5 is not a token count`},
		{"negative timestamp", `{"timestamp_ms": -1, "input_tokens": 2, "output_tokens": 3}` + "\n", "", `t:1: "timestamp_ms": -1 is out of range`},
		{"bad hash ids", `{"timestamp": 0, "input_length": 2, "output_length": 3, "hash_ids": [1, "x"]}` + "\n", "", `t:1: "hash_ids": not a list of integers`},
		{"decreasing timestamps", `{"timestamp": 10, "input_length": 2, "output_length": 3}` + "\n\n" + `{"timestamp": 4, "input_length": 2, "output_length": 3}` + "\n", "", "t:3: the timestamp is 6ms before the record above it"},
		{"azure bad date", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,1,2\nyesterday,1,2\n", "", `t:3: "TIMESTAMP": "yesterday" is not a date and time`},
		{"azure bad count", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,many,2\n", "", `t:2: "ContextTokens": "many" is not a number`},
		{"azure short row", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,1\n", "", "t:2: 2 columns, the header has 3"},
		{"azure header without a column", "TIMESTAMP,Tokens\n", Azure, `t:1: the header has no column "ContextTokens" (azure trace)`},
		{"timestamp past a duration", `{"timestamp_ms": 9223372036854.775, "input_tokens": 2, "output_tokens": 3}` + "\n", "", `t:1: "timestamp_ms": 9.223372036854775e+12 is out of range`},
		{"burstgpt NaN seconds", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\nNaN,ChatGPT,1,2,3,API log\n", "", `t:2: "Timestamp": "NaN" is not a number of seconds`},
		{"burstgpt bad seconds", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n-5,ChatGPT,1,2,3,API log\n", "", `t:2: "Timestamp": "-5" is not a number of seconds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tt.src), "t", Options{Format: tt.format})
			for err == nil {
				_, err = r.Next(context.Background())
			}
			if err == io.EOF || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestAHugeLineIsAnErrorNotAnAllocation(t *testing.T) {
	src := `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n" + strings.Repeat("x", 4096) + "\n"
	r, err := NewReader(strings.NewReader(src), "big.jsonl", Options{MaxLineBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = r.Next(context.Background())
	if err == nil || !strings.Contains(err.Error(), "big.jsonl:2: a line is longer than 1024 bytes") {
		t.Fatalf("error %v, want the line named", err)
	}
}

func TestNextStopsWhenTheContextEnds(t *testing.T) {
	r, err := Open(filepath.Join("testdata", "mooncake.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// generated is a Mooncake trace of n records made as it is read, so that
// the test holds no trace in memory either.
type generated struct {
	n, i int
	buf  []byte
}

func (g *generated) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		g.buf = fmt.Appendf(g.buf[:0], `{"timestamp": %d, "input_length": %d, "output_length": 64, "hash_ids": [%d, %d, %d], "session": "s%d"}`+"\n", g.i*3, 512*3, g.i%7, g.i, g.i+1, g.i%100)
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

func TestALargeTraceStreamsInBoundedMemory(t *testing.T) {
	const n = 200_000
	r, err := NewReader(&generated{n: n}, "generated", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var count int64
	var last Record
	for {
		rec, err := r.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		count++
		last = rec
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if count != n || last.Index != n-1 || last.Start != (n-1)*3*time.Millisecond {
		t.Fatalf("read %d records, the last #%d at %s", count, last.Index, last.Start)
	}
	// The trace is over 20 MB (n × ~110 bytes); what stays live after
	// reading it must be a line's worth, not the trace's.
	const bound = 2 << 20
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > bound {
		t.Fatalf("the heap grew by %d bytes reading %d records, want under %d", grew, n, bound)
	}
	t.Logf("heap %d → %d bytes; %d allocated in all", before.HeapAlloc, after.HeapAlloc, after.TotalAlloc-before.TotalAlloc)
}
