package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmrun/llmrun/internal/race"
)

// chunkDiff describes how two decoded chunks differ, "" when they hold the
// same values (an absent value and an empty one are the same).
func chunkDiff(got, want *chunk) string {
	var diffs []string
	field := func(name string, g, w json.RawMessage) {
		if !bytes.Equal(g, w) {
			diffs = append(diffs, fmt.Sprintf("%s %q, want %q", name, g, w))
		}
	}
	field("usage", got.Usage, want.Usage)
	field("error", got.Error, want.Error)
	field("object", got.Object, want.Object)
	field("message", got.Message, want.Message)
	if len(got.Choices) != len(want.Choices) {
		return fmt.Sprintf("%d choices, want %d", len(got.Choices), len(want.Choices))
	}
	for i := range got.Choices {
		g, w := &got.Choices[i], &want.Choices[i]
		p := fmt.Sprintf("choice %d ", i)
		field(p+"text", g.Text, w.Text)
		field(p+"finish_reason", g.FinishReason, w.FinishReason)
		for _, m := range []struct {
			name string
			g, w *message
		}{{"delta", &g.Delta, &w.Delta}, {"message", &g.Message, &w.Message}} {
			field(p+m.name+".content", m.g.Content, m.w.Content)
			field(p+m.name+".reasoning_content", m.g.ReasoningContent, m.w.ReasoningContent)
			field(p+m.name+".reasoning", m.g.Reasoning, m.w.Reasoning)
			field(p+m.name+".tool_calls", m.g.ToolCalls, m.w.ToolCalls)
		}
	}
	return strings.Join(diffs, "; ")
}

// transcriptChunks returns the data of every chunk of the OpenAI
// transcripts in testdata and of the benchmark stream.
func transcriptChunks(t testing.TB) [][]byte {
	files, err := filepath.Glob("testdata/openai-*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	streams := make([][]byte, 0, len(files)+1)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, data)
	}
	bench, _ := openAIStream(10)
	streams = append(streams, bench)
	var chunks [][]byte
	for _, stream := range streams {
		lines := bufio.NewScanner(bytes.NewReader(stream))
		for lines.Scan() {
			data, ok := bytes.CutPrefix(bytes.TrimSpace(lines.Bytes()), []byte("data:"))
			if data = bytes.TrimSpace(data); ok && len(data) > 0 && string(data) != "[DONE]" {
				chunks = append(chunks, bytes.Clone(data))
			}
		}
	}
	return chunks
}

// TestChunkScannerReadsWhatServersSend checks that the scanner, not
// encoding/json, reads every chunk of the transcripts, and reads each as
// encoding/json does.
func TestChunkScannerReadsWhatServersSend(t *testing.T) {
	t.Parallel()
	for _, data := range transcriptChunks(t) {
		var got, want chunk
		if !scanChunk(data, &got) {
			t.Errorf("the scanner left %s to encoding/json", data)
			continue
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("encoding/json: %v: %s", err, data)
		}
		if d := chunkDiff(&got, &want); d != "" {
			t.Errorf("%s: %s", data, d)
		}
	}
}

// TestChunkScannerEdgeCases checks chunks that the scanner reads (scanned)
// or leaves to encoding/json, and that decoding each, reusing one chunk
// after another, gives what encoding/json gives a fresh chunk, or fails
// when encoding/json fails.
func TestChunkScannerEdgeCases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data string
		scanned    bool
	}{
		{"escapes", `{"choices":[{"delta":{"content":"a\n\"b\"\\\/\b\f\r\t\u00e9\ud83d\ude00"}}]}`, true},
		{"lone surrogate", `{"choices":[{"delta":{"content":"\ud800"}}]}`, true},
		{"invalid UTF-8 in a value", "{\"choices\":[{\"text\":\"\xff\xfe\"}]}", true},
		{"non-ASCII text", `{"choices":[{"text":"héllo 世界"}]}`, true},
		{"space inside", " {\"choices\" :\t[ {\"delta\" : {\"content\" : \"x\" } , \"finish_reason\":\r\n\"stop\" } ] }", false},
		{"space between members", "{\"choices\" :\t[ {\"delta\" : {\"content\" : \"x\" } , \"finish_reason\":\r\n\"stop\" } ] }", true},
		{"nested unknown values", `{"x":{"a":[1,{"b":[[],{}]},"c",true,false,null,-0.5e+3]},"choices":[{"logprobs":{"content":[{"token":"a","bytes":[97]}]},"delta":{"content":"a"}}]}`, true},
		{"duplicate raw key", `{"choices":[{"delta":{"content":"a","content":"b"}}],"usage":null,"usage":{"completion_tokens":2}}`, true},
		{"duplicate delta merges", `{"choices":[{"delta":{"content":"a"},"delta":{"reasoning":"r"}}]}`, true},
		{"duplicate choices", `{"choices":[{"text":"a"},{"text":"b"}],"choices":[{}],"choices":[{},{}]}`, false},
		{"keys in any case", `{"CHOICES":[{"Delta":{"Content":"a","REASONING_CONTENT":"r"},"Finish_Reason":"stop"}],"Usage":{}}`, true},
		{"a near miss of a key", `{"choices":[{"delta":{"reasoning?content":"r"}}]}`, true},
		{"escaped key", `{"\u0063hoices":[{"text":"a"}]}`, false},
		{"folded non-ASCII key", `{"choiceſ":[{"text":"a"}]}`, false},
		{"null values", `{"choices":[null,{"delta":null,"message":null,"text":null,"finish_reason":null}],"usage":null,"error":null}`, true},
		{"null choices", `{"choices":null}`, false},
		{"empty choices", `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}`, true},
		{"numbers", `{"usage":{"prompt_tokens":0,"completion_tokens":12,"x":-1.5E-3,"y":1e9,"z":0.0}}`, true},
		{"error chunk", `{"error":{"message":"boom","code":500}}`, true},
		{"vLLM error chunk", `{"object":"error","message":"boom","code":400}`, true},
		{"null document", `null`, false},
		{"a list", `[{"choices":[]}]`, false},
		{"choices not a list", `{"choices":{"text":"a"}}`, false},
		{"choice not an object", `{"choices":["a"]}`, false},
		{"delta not an object", `{"choices":[{"delta":"a"}]}`, false},
		{"space after", `{"choices":[]} `, false},
		{"data after", `{"choices":[]}{}`, false},
		{"truncated", `{"choices":[{"delta":{"content":"a`, false},
		{"control character", "{\"choices\":[{\"text\":\"a\x01\"}]}", false},
		{"bad escape", `{"choices":[{"text":"\x"}]}`, false},
		{"short unicode escape", `{"choices":[{"text":"\u12"}]}`, false},
		{"leading zero", `{"usage":{"prompt_tokens":01}}`, false},
		{"bare minus", `{"x":-}`, false},
		{"trailing comma", `{"choices":[{"text":"a"},]}`, false},
		{"bad literal", `{"x":nul}`, false},
		{"deep nesting", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, false},
		{"nesting the scanner follows", `{"x":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var scanned chunk
			if got := scanChunk([]byte(tc.data), &scanned); got != tc.scanned {
				t.Errorf("scanned %v, want %v", got, tc.scanned)
			}
			checkDecodeLikeEncodingJSON(t, &chunkDecoder{}, &chunk{}, []byte(tc.data))
		})
	}
}

// checkDecodeLikeEncodingJSON decodes data, TrimSpace'd as the readers
// pass it, with d into c, and checks that it fails when encoding/json
// fails, and otherwise gives what encoding/json gives a fresh chunk.
func checkDecodeLikeEncodingJSON(t *testing.T, d *chunkDecoder, c *chunk, data []byte) {
	t.Helper()
	data = bytes.TrimSpace(data)
	var want chunk
	wantErr := json.Unmarshal(data, &want)
	if wantErr == nil && len(data) >= choiceScanFrom && choicesLen(data, maxChoices) > maxChoices {
		wantErr = fmt.Errorf("more than %d choices", maxChoices)
	}
	err := d.decode(data, c)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("decode error %v, encoding/json's %v: %q", err, wantErr, data)
	case err == nil:
		if diff := chunkDiff(c, &want); diff != "" {
			t.Fatalf("%s: %q", diff, data)
		}
	}
}

// FuzzChunkDecode checks the chunk decoder against encoding/json on
// arbitrary chunks, one decoder and chunk reused from one to the next as a
// stream reuses them: the same values, or both fail.
func FuzzChunkDecode(f *testing.F) {
	for _, data := range transcriptChunks(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"choices":[{"delta":{"content":"\ud83d\ude00\n","content":null},"delta":null}],"Usage":{"completion_tokens":1e2}}`))
	f.Add([]byte(`{"object":"error","message":{"message":"x"},"x":[{"y":[]},-0.0E+1,"\u00e9"]}`))
	f.Add([]byte(`{"choices":[{"text":"a"},null],"choices":[{}]}`))
	d, c := &chunkDecoder{}, &chunk{}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeLikeEncodingJSON(t, d, c, data)
	})
}

// BenchmarkChunkDecode measures decoding one typical content chunk.
func BenchmarkChunkDecode(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-8f3c2a9e4b6d4e0f9a1b2c3d4e5f6a7b","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":" quick"},"logprobs":null,"finish_reason":null}]}`)
	var d chunkDecoder
	var c chunk
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := d.decode(data, &c); err != nil || !present(c.Choices[0].Delta.Content) {
			b.Fatal(err)
		}
	}
}

// appendUnquoted appends what encoding/json decodes, with or without
// escapes and invalid UTF-8, and fails where it fails.
func TestAppendUnquoted(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`""`, `"plain"`, `"héllo 世界"`, `"a\n\"b\"\u00e9\ud83d\ude00"`, `"\ud800"`, "\"\xff\xfe\"", `null`, `5`, `{"a":1}`} {
		var want string
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, err := appendUnquoted([]byte("x"), json.RawMessage(raw), maxKeptText)
		switch {
		case (err == nil) != (wantErr == nil):
			t.Errorf("%s: error %v, encoding/json's %v", raw, err, wantErr)
		case err != nil && string(got) != "x":
			t.Errorf("%s: failed leaving %q, want %q", raw, got, "x")
		case err == nil && string(got) != "x"+want:
			t.Errorf("%s: %q, want %q", raw, got, "x"+want)
		}
	}
}

// Short of room, appendUnquoted appends the start of the string exactly
// as the whole decodes it, taking dst past its limit by one character at
// most (escapes, surrogate pairs and invalid UTF-8 included).
func TestAppendUnquotedStopsPastItsLimit(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`"plain text"`, `"héllo 世界 😀 done"`, `"a\n\"b\"\u00e9\ud83d\ude00\u4e16z\ud800\u0041"`, "\"ab\xff\xfe\xe4\xb8cd\"", `"\ud83d\ude00\ud83d\ude00"`} {
		var whole string
		if err := json.Unmarshal([]byte(raw), &whole); err != nil {
			t.Fatal(err)
		}
		whole = "x" + whole
		for limit := range len(whole) + 2 {
			got, err := appendUnquoted([]byte("x"), json.RawMessage(raw), limit)
			switch {
			case err != nil:
				t.Errorf("%s, limit %d: %v", raw, limit, err)
			case !strings.HasPrefix(whole, string(got)):
				t.Errorf("%s, limit %d: %q, not a start of %q", raw, limit, got, whole)
			case len(got) < min(len(whole), limit+1) || len(got) > limit+1+utf8.UTFMax:
				t.Errorf("%s, limit %d: %d bytes (%q), want %d to %d", raw, limit, len(got), got, min(len(whole), limit+1), limit+1+utf8.UTFMax)
			}
		}
	}
}

// Decoding a content chunk and taking its text allocate nothing once the
// buffers have grown.
func TestChunkTextAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts mean nothing under the race detector: TestChunkTextAllocatesNothing counts them without -race, TestChunkScannerReadsWhatServersSend covers the decoding under it")
	}
	data := []byte(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" quick","reasoning_content":null},"logprobs":null,"finish_reason":null}]}`)
	var d chunkDecoder
	var c chunk
	text := make([]byte, 0, 1024)
	n := testing.AllocsPerRun(100, func() {
		if err := d.decode(data, &c); err != nil {
			t.Fatal(err)
		}
		reasoning, answer := c.tokens()
		if reasoning || !answer {
			t.Fatal("tokens", reasoning, answer)
		}
		var err error
		if text, err = c.appendText(text[:0], maxKeptText); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 || string(text) != " quick" {
		t.Errorf("%v allocations per chunk, text %q", n, text)
	}
}

// usageSeeds are usages as servers send them and the edges encoding/json
// decides: nulls, duplicate and differently cased keys, counts that are
// not plain integers, too long or overflowing, details of the wrong kind.
var usageSeeds = []string{
	`{"prompt_tokens":9,"completion_tokens":10,"total_tokens":19}`,
	`{"prompt_tokens":512,"completion_tokens":128,"total_tokens":640,"prompt_tokens_details":{"cached_tokens":256},"completion_tokens_details":{"reasoning_tokens":64}}`,
	`{"prompt_tokens":1,"prompt_tokens_details":null,"completion_tokens_details":null}`,
	`{"prompt_tokens":null,"completion_tokens":-0,"prompt_tokens_details":{"cached_tokens":null}}`,
	`{"Prompt_Tokens":3,"COMPLETION_TOKENS":4,"prompt_tokens":5}`,
	`{"prompt_tokens_details":{"cached_tokens":1},"prompt_tokens_details":{"x":2}}`,
	`{"completion_tokens":1.0}`,
	`{"completion_tokens":1e2}`,
	`{"completion_tokens":"7"}`,
	`{"completion_tokens":123456789012345678}`,
	`{"completion_tokens":1234567890123456789}`,
	`{"completion_tokens":99999999999999999999}`,
	`{"completion_tokens":-123456789012345678}`,
	`{"prompt_tokens_details":[]}`,
	`{"prompt_tokens_details":{"cached_tokens":true}}`,
	`{"x":{"y":[1,{"z":null}]},"completion_tokens":2}`,
	`{"completion_tokens":2} `,
	`{"completion_tokens":2,}`,
	`{}`,
	`null`,
	`[]`,
}

// checkUsageLikeEncodingJSON checks that decodeUsage gives data what
// encoding/json gives it, and fails where it fails.
func checkUsageLikeEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	var want usage
	want.PromptTokensDetails.CachedTokens = absentCount
	wantErr := json.Unmarshal(data, &want)
	got, err := decodeUsage(data)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("decodeUsage error %v, encoding/json's %v: %q", err, wantErr, data)
	case err == nil && got != want:
		t.Fatalf("decodeUsage %+v, encoding/json %+v: %q", got, want, data)
	}
}

func TestUsageDecode(t *testing.T) {
	t.Parallel()
	for _, data := range usageSeeds {
		checkUsageLikeEncodingJSON(t, []byte(data))
	}
}

// The usages servers send are read by scanUsage, without encoding/json;
// the shapes it leaves to encoding/json are the rare ones, and what it
// reads, it reads as encoding/json decodes it.
func TestScanUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		data  string
		reads bool
	}{
		{`{"prompt_tokens":9,"completion_tokens":10,"total_tokens":19}`, true},
		{`{"prompt_tokens":9,"total_tokens":19,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":8}}`, true},
		{`{"prompt_tokens":9,"completion_tokens":10,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":4,"audio_tokens":0}}`, true},
		{`{ "Prompt_Tokens" : 9 , "COMPLETION_TOKENS":-0, "prompt_tokens_details":{"cached_tokens":null}, "x":[1,{"y":2}] }`, true},
		{`{"prompt_tokens":1,"prompt_tokens":2,"completion_tokens":9223372036854775807}`, true},
		{`{"completion_tokens":-9223372036854775808}`, true},
		{`{}`, true},
		{`{"completion_tokens":9223372036854775808}`, false},
		{`{"completion_tokens":18446744073709551616}`, false},
		{`{"completion_tokens":1.0}`, false},
		{`{"completion_tokens":1e3}`, false},
		{`{"completion_tokens":"10"}`, false},
		{`{"completion_tokens":01}`, false},
		{`{"completion_tokens":-}`, false},
		{`{"prompt_tokens_details":[]}`, false},
		{`{"prompt_tokens_details":{"cached_tokens":true}}`, false},
		{`{"prompt_\u0074okens":3}`, false},
		{`{"completion_tokens":1}x`, false},
		{`{"completion_tokens":1`, false},
		{`null`, false},
		{` {"completion_tokens":1}`, false},
	} {
		var u usage
		u.PromptTokensDetails.CachedTokens = absentCount
		if read := scanUsage([]byte(tc.data), &u); read != tc.reads {
			t.Errorf("scanUsage read %s: %v, want %v", tc.data, read, tc.reads)
		}
		checkUsageLikeEncodingJSON(t, []byte(tc.data))
	}
}

// FuzzUsageDecode checks decodeUsage against encoding/json on arbitrary
// usages: the same values, or both fail.
func FuzzUsageDecode(f *testing.F) {
	for _, data := range usageSeeds {
		f.Add([]byte(data))
	}
	f.Add([]byte(`{ "Prompt_Tokens" : 9 , "COMPLETION_TOKENS":-0, "prompt_tokens_details":null, "x":[1,{"y":2}] }`))
	f.Add([]byte(`{"completion_tokens":9223372036854775807,"completion_tokens":1e3}`))
	f.Fuzz(checkUsageLikeEncodingJSON)
}

// Decoding a usage allocates nothing.
func TestUsageAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts mean nothing under the race detector: TestUsageAllocatesNothing counts them without -race, TestUsageDecode covers the decoding under it")
	}
	data := []byte(usageSeeds[1])
	n := testing.AllocsPerRun(100, func() {
		if u, err := decodeUsage(data); err != nil || u.CompletionTokens != 128 {
			t.Fatal(u, err)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
