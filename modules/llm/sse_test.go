package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// ev is an Event that owns its data, for comparisons.
type ev struct {
	Type, Data, ID string
}

// readEvents reads every event of s and the error that ended the stream.
func readEvents(s *SSEReader) ([]ev, error) {
	var out []ev
	for {
		e, err := s.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Type, string(e.Data), e.ID})
	}
}

// chunkReader returns its input in reads of the given sizes, cycling.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.sizes) > 0 {
		n = min(n, c.sizes[c.i%len(c.sizes)])
		c.i++
	}
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 1<<20+17)
	huge := strings.Repeat("y", 3<<20)
	tests := []struct {
		name string
		in   string
		want []ev
		err  error
	}{
		{"empty", "", nil, io.EOF},
		{"one event", "data: hello\n\n", []ev{{"", "hello", ""}}, io.EOF},
		{"two events", "data: a\n\ndata: b\n\n", []ev{{"", "a", ""}, {"", "b", ""}}, io.EOF},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{"", "a", ""}, {"", "b", ""}}, io.EOF},
		{"CR", "data: a\r\rdata: b\r\r", []ev{{"", "a", ""}, {"", "b", ""}}, io.EOF},
		{"mixed endings", "data: a\r\n\rdata: b\n\r\n", []ev{{"", "a", ""}, {"", "b", ""}}, io.EOF},
		{"comments", ": ping\n\n:\ndata: a\n: inside\n\n", []ev{{"", "a", ""}}, io.EOF},
		{"multi-line data", "data: a\ndata: b\ndata:\ndata: c\n\n", []ev{{"", "a\nb\n\nc", ""}}, io.EOF},
		{"no space after colon", "data:a\n\n", []ev{{"", "a", ""}}, io.EOF},
		{"only one space removed", "data:  a \n\n", []ev{{"", " a ", ""}}, io.EOF},
		{"field without colon", "data\ndata\n\n", []ev{{"", "\n", ""}}, io.EOF},
		{"empty data is an event", "data:\n\n", []ev{{"", "", ""}}, io.EOF},
		{"event type", "event: delta\ndata: a\n\ndata: b\n\n", []ev{{"delta", "a", ""}, {"", "b", ""}}, io.EOF},
		{"event without data is dropped", "event: x\n\ndata: a\n\n", []ev{{"", "a", ""}}, io.EOF},
		{"id persists", "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []ev{{"", "a", "1"}, {"", "b", "1"}, {"", "c", ""}}, io.EOF},
		{"id with NUL ignored", "id: 7\ndata: a\n\nid: 8\x00\ndata: b\n\n", []ev{{"", "a", "7"}, {"", "b", "7"}}, io.EOF},
		{"retry and unknown fields", "retry: 10\nfoo: bar\ndata: a\n\n", []ev{{"", "a", ""}}, io.EOF},
		{"done marker", "data: {}\n\ndata: [DONE]\n\n", []ev{{"", "{}", ""}, {"", "[DONE]", ""}}, io.EOF},
		{"blank lines only", "\n\n\r\n\r", nil, io.EOF},
		{"byte order mark", "\xEF\xBB\xBFdata: a\n\n", []ev{{"", "a", ""}}, io.EOF},
		{"BOM only at the start", "data: a\n\n\xEF\xBB\xBFdata: b\n\n", []ev{{"", "a", ""}}, io.EOF},
		{"EOF after data line", "data: a\n\ndata: b\n", []ev{{"", "a", ""}}, io.ErrUnexpectedEOF},
		{"EOF inside a line", "data: a\n\ndata: b", []ev{{"", "a", ""}}, io.ErrUnexpectedEOF},
		{"EOF after event field", "data: a\n\nevent: x\n", []ev{{"", "a", ""}}, io.ErrUnexpectedEOF},
		{"EOF after comment", "data: a\n\n: bye\n", []ev{{"", "a", ""}}, io.EOF},
		{"EOF after CR", "data: a\r\r", []ev{{"", "a", ""}}, io.EOF},
		{"line over 1 MiB", "data: " + long + "\n\ndata: b\n\n", []ev{{"", long, ""}, {"", "b", ""}}, io.EOF},
		{"line of 3 MiB, CRLF", "data: " + huge + "\r\n\r\n", []ev{{"", huge, ""}}, io.EOF},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"data+EOF": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
		"odd":      func(s string) io.Reader { return &chunkReader{data: []byte(s), sizes: []int{3, 1, 7, 2, 4096, 5}} },
	}
	for _, tt := range tests {
		for rname, mk := range readers {
			if rname == "one byte" && len(tt.in) > 1<<16 {
				continue
			}
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := readEvents(NewSSEReader(mk(tt.in)))
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("events = %.200q, want %.200q", got, tt.want)
				}
				if err != tt.err {
					t.Errorf("err = %v, want %v", err, tt.err)
				}
			})
		}
	}
}

// TestSSEReaderEverySplit splits a stream at every byte position in two reads.
func TestSSEReaderEverySplit(t *testing.T) {
	t.Parallel()
	in := "\xEF\xBB\xBF: c\r\nevent: e\r\nid: 4\r\ndata: a\r\ndata:b\r\n\r\ndata: [DONE]\r\rdata: x\n\n"
	want, wantErr := readEvents(NewSSEReader(strings.NewReader(in)))
	if wantErr != io.EOF || len(want) != 3 {
		t.Fatalf("unsplit: %q, %v", want, wantErr)
	}
	for i := 1; i < len(in); i++ {
		got, err := readEvents(NewSSEReader(&chunkReader{data: []byte(in), sizes: []int{i, len(in)}}))
		if !reflect.DeepEqual(got, want) || err != io.EOF {
			t.Errorf("split at %d: %q, %v; want %q", i, got, err, want)
		}
	}
}

func TestSSEReaderMaxSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []ev
		err  bool
	}{
		{"line at the limit", "data:" + strings.Repeat("a", 11) + "\n\n", []ev{{"", strings.Repeat("a", 11), ""}}, false},
		{"line over the limit", "data: a\n\ndata:" + strings.Repeat("a", 12) + "\n\n", []ev{{"", "a", ""}}, true},
		{"unterminated line over the limit", "data:" + strings.Repeat("a", 40), nil, true},
		{"data at the limit", "data:aaaaaaa\ndata:aaaaaaaa\n\n", []ev{{"", "aaaaaaa\naaaaaaaa", ""}}, false},
		{"data over the limit", "data:aaaaaaa\ndata:aaaaaaaaa\n\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSSEReader(iotest.HalfReader(strings.NewReader(tt.in)))
			s.SetMaxSize(16)
			got, err := readEvents(s)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events = %q, want %q", got, tt.want)
			}
			if tt.err != errors.Is(err, ErrTooLong) {
				t.Errorf("err = %v, want ErrTooLong: %v", err, tt.err)
			}
			if _, again := s.Next(); again != err {
				t.Errorf("second Next: %v, want the same error %v", again, err)
			}
		})
	}
}

// TestSSEReaderSmallerMax lowers the maximum of a reader whose buffer grew
// under the default.
func TestSSEReaderSmallerMax(t *testing.T) {
	t.Parallel()
	s := NewSSEReader(strings.NewReader("data: " + strings.Repeat("a", 100) + "\n\n"))
	if _, err := readEvents(s); err != io.EOF {
		t.Fatal(err)
	}
	s.Reset(strings.NewReader("data: " + strings.Repeat("a", 50) + "\n\n"))
	s.SetMaxSize(16)
	if _, err := s.Next(); !errors.Is(err, ErrTooLong) {
		t.Errorf("err = %v, want ErrTooLong", err)
	}
}

func TestSSEReaderReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	got, err := readEvents(NewSSEReader(r))
	if want := []ev{{"", "a", ""}}; !reflect.DeepEqual(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want it to wrap %v", err, boom)
	}
}

func TestSSEReaderNoProgress(t *testing.T) {
	t.Parallel()
	_, err := NewSSEReader(emptyReader{}).Next()
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("err = %v, want io.ErrNoProgress", err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestSSEReaderReset(t *testing.T) {
	t.Parallel()
	s := NewSSEReader(strings.NewReader("id: 1\nevent: x\ndata: a\n\ndata: partial"))
	if _, err := readEvents(s); err != io.ErrUnexpectedEOF {
		t.Fatalf("first stream: %v", err)
	}
	s.Reset(strings.NewReader("data: b\n\n"))
	got, err := readEvents(s)
	if want := []ev{{"", "b", ""}}; !reflect.DeepEqual(got, want) || err != io.EOF {
		t.Errorf("after Reset: %q, %v; want %q, EOF", got, err, want)
	}
}

// refSSE is a plain reference parser of a whole stream, written straight
// from the standard, for the fuzz test.
func refSSE(in []byte) ([]ev, error) {
	var lines [][]byte
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			break
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	if len(lines) > 0 {
		lines[0] = bytes.TrimPrefix(lines[0], utf8BOM)
	}
	var (
		out            []ev
		data, typ, id  string
		hasData, dirty bool
	)
	for _, l := range lines {
		if len(l) == 0 {
			if hasData {
				out = append(out, ev{typ, data, id})
			}
			data, typ, hasData, dirty = "", "", false, false
			continue
		}
		if l[0] == ':' {
			continue
		}
		dirty = true
		name, value, _ := strings.Cut(string(l), ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "data":
			if hasData {
				data += "\n"
			}
			data += value
			hasData = true
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	if dirty || len(in) > 0 {
		return out, io.ErrUnexpectedEOF
	}
	return out, io.EOF
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: a\n\n"), []byte{1})
	f.Add([]byte("\xEF\xBB\xBFevent: e\r\nid: 1\r\ndata: a\r\ndata:b\r\n\r\n: c\rdata\r\r"), []byte{2, 5, 1})
	f.Add([]byte("data: x\ndata: y\n\nid: 2\x00\ndata: [DONE]\n\ndata: tail"), []byte{7, 3})
	// Every recorded event-stream transcript of testdata seeds it too.
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, []byte{3, 11, 1})
	}
	f.Fuzz(func(t *testing.T, in, splits []byte) {
		want, wantErr := refSSE(in)
		sizes := make([]int, len(splits))
		for i, b := range splits {
			sizes[i] = int(b)%13 + 1
		}
		for name, r := range map[string]io.Reader{
			"whole": bytes.NewReader(in),
			"split": &chunkReader{data: in, sizes: sizes},
		} {
			got, err := readEvents(NewSSEReader(r))
			if !reflect.DeepEqual(got, want) || err != wantErr {
				t.Fatalf("%s: got %q, %v; want %q, %v", name, got, err, want, wantErr)
			}
		}
	})
}

// openAIStream builds a realistic chat completions stream: a role chunk, n
// content chunks, a finish chunk, a usage chunk and [DONE]. It returns the
// stream and its number of events.
func openAIStream(n int) ([]byte, int) {
	var b bytes.Buffer
	const head = `{"id":"chatcmpl-8f3c2a9e4b6d4e0f9a1b2c3d4e5f6a7b","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","system_fingerprint":null,"choices":[{"index":0,`
	fmt.Fprintf(&b, "data: %s\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", head)
	words := []string{" the", " quick", " brown", " fox", " jumps", " over", " lazy", " dog", "\\n", " \\\"ok\\\""}
	for i := range n {
		fmt.Fprintf(&b, "data: %s\"delta\":{\"content\":\"%s\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", head, words[i%len(words)])
	}
	fmt.Fprintf(&b, "data: %s\"delta\":{},\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}]}\n\n", head)
	fmt.Fprintf(&b, "data: %s\n\n", `{"id":"chatcmpl-8f3c2a9e4b6d4e0f9a1b2c3d4e5f6a7b","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":512,"total_tokens":768,"completion_tokens":256}}`)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes(), n + 4
}

func BenchmarkSSEReader(b *testing.B) {
	stream, events := openAIStream(256)
	r := bytes.NewReader(stream)
	s := NewSSEReader(r)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		r.Reset(stream)
		s.Reset(r)
		for {
			if _, err := s.Next(); err != nil {
				break
			}
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*events), "allocs/event")
}
