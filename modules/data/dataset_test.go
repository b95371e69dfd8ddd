package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

const datasetDir = "testdata/datasets"

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
		err  string
	}{
		{in: "sharegpt", want: FormatShareGPT},
		{in: "jsonl", want: FormatJSONL},
		{in: " CSV ", want: FormatCSV},
		{in: "", err: "no dataset format given: want one of sharegpt, jsonl, csv"},
		{in: "yaml", err: `unknown dataset format "yaml": want one of sharegpt, jsonl, csv`},
	} {
		got, err := ParseFormat(tc.in)
		if got != tc.want || errorText(err) != tc.err {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Format
		err  string
	}{
		{path: "a/b.jsonl", want: FormatJSONL},
		{path: "b.NDJSON", want: FormatJSONL},
		{path: "b.csv", want: FormatCSV},
		{path: "ShareGPT_V3_unfiltered_cleaned_split.json", want: FormatShareGPT},
		{path: "b.txt", err: "b.txt: cannot tell the dataset format by the extension .txt: pass a format (sharegpt, jsonl, csv)"},
		{path: "data/b", err: "data/b: no file extension to tell the dataset format by: pass a format (sharegpt, jsonl, csv)"},
	} {
		got, err := FormatOf(tc.path)
		if got != tc.want || errorText(err) != tc.err {
			t.Errorf("FormatOf(%q) = %q, %v; want %q, %q", tc.path, got, err, tc.want, tc.err)
		}
	}
}

func userMsg(s string) Message      { return Message{Role: RoleUser, Content: s} }
func assistantMsg(s string) Message { return Message{Role: RoleAssistant, Content: s} }
func systemMsg(s string) Message    { return Message{Role: RoleSystem, Content: s} }

func TestLoadDataset(t *testing.T) {
	for _, tc := range []struct {
		file    string
		format  Format
		want    []Record
		skipped int
	}{
		{
			file: "sharegpt.json",
			want: []Record{
				{ID: "simple_0", Prompt: "What is the capital of France?", Completion: "The capital of France is Paris.",
					Messages: []Message{userMsg("What is the capital of France?"), assistantMsg("The capital of France is Paris.")}},
				{ID: "system_0", Prompt: "Name three primary colours.", Completion: "Red, yellow, blue.",
					Messages: []Message{systemMsg("You are a terse assistant."), userMsg("Name three primary colours."), assistantMsg("Red, yellow, blue.")}},
				{ID: "multi_0", Prompt: "Write a haiku about rain.", Completion: "Soft rain on the roof,\nthe gutters hum their old song,\nthe street shines like glass.",
					Messages: []Message{
						userMsg("Write a haiku about rain."),
						assistantMsg("Soft rain on the roof,\nthe gutters hum their old song,\nthe street shines like glass."),
						userMsg("Now one about snow."),
						assistantMsg("White hush on the field,\nfootprints fill before morning,\nthe world holds its breath."),
					}},
				{ID: "roles_0", Prompt: `Translate "good morning" into Spanish, with é accents: café.`, Completion: "Buenos días. Café.",
					Messages: []Message{userMsg(`Translate "good morning" into Spanish, with é accents: café.`), assistantMsg("Buenos días. Café.")}},
				{ID: "unanswered_0", Prompt: "Is anyone there?", Messages: []Message{userMsg("Is anyone there?")}},
			},
			skipped: 1,
		},
		{
			file: "prompts.jsonl",
			want: []Record{
				{ID: "p1", Prompt: "Summarize the plot of Hamlet in two sentences.", OutputTokens: 64,
					Messages: []Message{userMsg("Summarize the plot of Hamlet in two sentences.")}},
				{ID: "2", Prompt: "List five prime numbers.", Completion: "2, 3, 5, 7, 11",
					Messages: []Message{systemMsg("Answer with numbers only."), userMsg("List five prime numbers.")}},
				{Prompt: "Explain TCP slow start.", Messages: []Message{userMsg("Explain TCP slow start.")}},
				{ID: "m1", Prompt: "What does HTTP 429 mean?", Completion: "Too Many Requests: the client is being rate limited.",
					Messages: []Message{
						systemMsg("You are a helpful assistant."),
						userMsg("What does HTTP 429 mean?"),
						assistantMsg("Too Many Requests: the client is being rate limited."),
						userMsg("How should a client react?"),
					}},
				{ID: "m2", Prompt: "Count to three.", Completion: "1, 2, 3", OutputTokens: 8, Messages: []Message{userMsg("Count to three.")}},
			},
		},
		{
			file: "prompts.csv",
			want: []Record{
				{ID: "c1", Prompt: "Compare apples, oranges, and pears.", OutputTokens: 32, Messages: []Message{userMsg("Compare apples, oranges, and pears.")}},
				{ID: "c2", Prompt: "Write two lines:\nline one, with a comma\nline two \"quoted\"", Completion: "Line one.\nLine two.",
					Messages: []Message{systemMsg("Be brief."), userMsg("Write two lines:\nline one, with a comma\nline two \"quoted\"")}},
				{ID: "c3", Prompt: "Plain prompt", Messages: []Message{userMsg("Plain prompt")}},
			},
		},
		// An explicit format overrides the extension.
		{file: "prompts.csv", format: FormatCSV, want: nil},
	} {
		t.Run(tc.file+"/"+string(tc.format), func(t *testing.T) {
			path := filepath.Join(datasetDir, tc.file)
			d, err := LoadDataset(t.Context(), path, tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				return
			}
			want, _ := FormatOf(path)
			if d.Path != path || d.Format != want || d.Skipped != tc.skipped {
				t.Errorf("path %q, format %q, skipped %d; want %q, %q, %d", d.Path, d.Format, d.Skipped, path, want, tc.skipped)
			}
			if len(d.Records) != len(tc.want) {
				t.Fatalf("%d records, want %d: %+v", len(d.Records), len(tc.want), d.Records)
			}
			for i := range tc.want {
				if !reflect.DeepEqual(d.Records[i], tc.want[i]) {
					t.Errorf("record %d\n%+v\nwant\n%+v", i+1, d.Records[i], tc.want[i])
				}
			}
		})
	}
}

// TestLoadDatasetMalformed checks that each error names the file and the
// record, line and column at fault.
func TestLoadDatasetMalformed(t *testing.T) {
	const conv = `{"conversations": [{"from": "human", "value": "a"}]}`
	for _, tc := range []struct {
		name, file, data string
		want             string // the error, after "path: "
	}{
		// JSONL
		{"jsonl empty", "e.jsonl", "", "no records"},
		{"jsonl blank", "e.jsonl", "\n  \r\n\n", "no records"},
		{"jsonl no prompt", "x.jsonl", "{\"prompt\": \"a\"}\n\n{\"id\": \"x\"}\n", `record 2 (line 3): no "prompt" or "messages" field`},
		{"jsonl syntax", "x.jsonl", "{\"prompt\": \"a\"}\r\n{\"prompt\": \"b\",}\r\n", `record 2 (line 2, column 16): invalid character '}' looking for beginning of object key string`},
		{"jsonl truncated", "x.jsonl", "\n{\"prompt\": \"a", `record 1 (line 2, column 13): unexpected end of JSON input`},
		{"jsonl negative output_tokens", "x.jsonl", `{"prompt": "a", "output_tokens": -3}`, `record 1 (line 1): output_tokens -3 is not a non-negative integer`},
		{"jsonl fractional output_tokens", "x.jsonl", `{"prompt": "a", "output_tokens": 1.5}`, `record 1 (line 1): output_tokens 1.5 is not a non-negative integer`},
		{"jsonl string output_tokens", "x.jsonl", `{"output_tokens": "12", "prompt": "a"}`, `record 1 (line 1): output_tokens "12" is not a non-negative integer`},
		{"jsonl huge output_tokens", "x.jsonl", `{"prompt": "a", "output_tokens": 99999999999}`, `record 1 (line 1): output_tokens 99999999999 is too large`},
		{"jsonl role", "x.jsonl", `{"messages": [{"role": "user", "content": "a"}, {"role": "bot", "content": "b"}]}`, `record 1 (line 1): messages[1].role "bot" is not one of system, user, assistant`},
		{"jsonl no user", "x.jsonl", `{"messages": [{"role": "system", "content": "a"}]}`, `record 1 (line 1): no message with role "user" in "messages"`},
		{"jsonl both", "x.jsonl", `{"prompt": "a", "messages": []}`, `record 1 (line 1): both "prompt" and "messages" fields`},
		{"jsonl prompt type", "x.jsonl", `{"prompt": 5}`, `record 1 (line 1): "prompt" is a JSON number, want a string`},
		{"jsonl content type", "x.jsonl", `{"messages": [{"role": "user", "content": [{"type": "text"}]}]}`, `record 1 (line 1): "messages.content" is a JSON array, want a string`},
		{"jsonl not an object", "x.jsonl", "{\"prompt\": \"a\"}\n[1, 2]\n", `record 2 (line 2): the record is a JSON array, want an object`},
		{"jsonl id type", "x.jsonl", `{"id": {}, "prompt": "a"}`, `record 1 (line 1): "id" is an object, want a string or a number`},
		// ShareGPT
		{"sharegpt empty", "e.json", "", "no records"},
		{"sharegpt empty array", "e.json", " [ ]\n", "no records"},
		{"sharegpt all skipped", "e.json", `[{"conversations": [{"from": "gpt", "value": "a"}]}, {"conversations": []}]`, "no records: no conversation has a user turn (2 skipped)"},
		{"sharegpt from", "x.json", "[\n" + conv + ",\n" + conv + ",\n  {\n    \"id\": \"c\",\n    \"conversations\": [\n      {\"from\": \"human\", \"value\": \"a\"},\n      {\"from\": \"bot\", \"value\": \"b\"}\n    ]\n  }\n]\n",
			`record 3 (line 4): conversations[1].from "bot" is not one of human, gpt, system, user, assistant, chatgpt, bing, bard`},
		{"sharegpt syntax", "x.json", "[\n " + conv + ",\n {\"conversations\": [}\n]", `record 2 (line 3, column 21): invalid character '}' looking for beginning of value`},
		{"sharegpt syntax in string", "x.json", "[" + conv + ",\n" + conv + ",\n\n{\"conversations\": [{\"from\": \"human\", \"value\": \"a\tb\"}]}]", `record 3 (line 4, column 49): invalid character '\t' in string literal`},
		{"sharegpt missing comma", "x.json", "[" + conv + "\n  " + conv + "]", `record 2 (line 2, column 3): expected comma after array element`},
		{"sharegpt trailing comma", "x.json", "[" + conv + ",\n]", `record 2 (line 2, column 1): invalid character ']' looking for beginning of value`},
		{"sharegpt truncated", "x.json", "[" + conv + ",\n" + `{"conversations": [{"from": "hu`, `record 2 (line 2, column 32): unexpected end of file`},
		{"sharegpt truncated after comma", "x.json", "[" + conv + ",\n ", `record 2 (line 2, column 2): unexpected end of file`},
		{"sharegpt not closed", "x.json", "[" + conv + "\n", `line 2, column 1: unexpected end of file: the array is not closed`},
		{"sharegpt closed by brace", "x.json", "[" + conv + "\n}", `line 2, column 1: invalid character '}' after array element`},
		{"sharegpt not an array", "x.json", "\n\n  " + conv, `line 3, column 3: not a JSON array (a ShareGPT file is an array of conversations)`},
		{"sharegpt garbage", "x.json", "hello", `line 1, column 1: not a JSON array (a ShareGPT file is an array of conversations)`},
		{"sharegpt after the array", "x.json", "[" + conv + "]\n\n [" + conv + "]", `line 3, column 2: data after the array`},
		{"sharegpt no conversations", "x.json", "[" + conv + ",\n  {\"id\": \"b\"}]", `record 2 (line 2): no "conversations" array`},
		{"sharegpt conversations type", "x.json", `[{"conversations": "hi"}]`, `record 1 (line 1): "conversations" is a JSON string, want an array`},
		{"sharegpt value type", "x.json", `[{"conversations": [{"from": "human", "value": 1}]}]`, `record 1 (line 1): "conversations.value" is a JSON number, want a string`},
		{"sharegpt element type", "x.json", "[" + conv + ",\n\"x\"]", `record 2 (line 2): the record is a JSON string, want an object`},
		// CSV
		{"csv empty", "e.csv", "", "no records"},
		{"csv header only", "e.csv", "id,prompt\r\n", "no records"},
		{"csv no prompt", "x.csv", "a, b\n1,2\n", `no "prompt" column in the header (columns: a, b)`},
		{"csv two prompts", "x.csv", "prompt,Prompt\n1,2\n", `the header has two "prompt" columns`},
		{"csv field count", "x.csv", "prompt,id\nx,1\n\"y\nz\",2\n3\n", `record 3 (line 5): wrong number of fields: 1, the header has 2`},
		{"csv bare quote", "x.csv", "prompt\nok\nab\"c\n", `record 2 (line 3, column 3): bare " in non-quoted-field`},
		{"csv open quote", "x.csv", "prompt,id\n\"abc,1\n", `record 1 (line 2, column 8): extraneous or missing " in quoted-field`},
		{"csv header quote", "x.csv", "pro\"mpt\n", `the header (line 1, column 4): bare " in non-quoted-field`},
		{"csv output_tokens", "x.csv", "prompt,output_tokens\n\"a\nb\",1\nc,-1\n", `record 2 (line 4): output_tokens -1 is not a non-negative integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadDataset(t.Context(), path, "")
			if want := path + ": " + tc.want; errorText(err) != want {
				t.Errorf("error\n%v\nwant\n%s", err, want)
			}
		})
	}
}

func TestLoadDatasetBOM(t *testing.T) {
	for _, tc := range []struct{ file, data string }{
		{"b.jsonl", "\uFEFF{\"prompt\": \"a\"}\n"},
		{"b.json", "\uFEFF[{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}]}]"},
		{"b.csv", "\uFEFFprompt\na\n"},
	} {
		path := filepath.Join(t.TempDir(), tc.file)
		if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := LoadDataset(t.Context(), path, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Records) != 1 || d.Records[0].Prompt != "a" {
			t.Errorf("%s: records %+v", tc.file, d.Records)
		}
	}
}

func TestLoadDatasetErrors(t *testing.T) {
	if _, err := LoadDataset(t.Context(), filepath.Join(datasetDir, "missing.jsonl"), ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := LoadDataset(t.Context(), filepath.Join(datasetDir, "prompts.jsonl"), "yaml"); errorText(err) != `unknown dataset format "yaml": want one of sharegpt, jsonl, csv` {
		t.Errorf("unknown format: %v", err)
	}
	if _, err := LoadDataset(t.Context(), "prompts.txt", ""); err == nil || !strings.Contains(err.Error(), "pass a format") {
		t.Errorf("unknown extension: %v", err)
	}
	// The wrong format for the file.
	if _, err := LoadDataset(t.Context(), filepath.Join(datasetDir, "prompts.jsonl"), FormatShareGPT); err == nil || !strings.Contains(err.Error(), "not a JSON array") {
		t.Errorf("JSONL as ShareGPT: %v", err)
	}
}

// TestLoadDatasetLongLine loads a JSONL line longer than 64 MiB, whose
// texts are each within MaxPromptBytes.
func TestLoadDatasetLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 65 MiB file: TestLoadDatasetSmallReads covers lines split across reads; only a line over 64 MiB is left out")
	}
	prompt, completion := strings.Repeat("x", 40<<20), strings.Repeat("y", 25<<20)
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(path, []byte("{\"prompt\": \"a\"}\n{\"prompt\": \""+prompt+"\", \"completion\": \""+completion+"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDataset(t.Context(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Records) != 2 || d.Records[1].Prompt != prompt || d.Records[1].Completion != completion {
		t.Errorf("%d records", len(d.Records))
	}
}

// TestLoadDatasetSmallReads checks that records and error positions do
// not depend on how the input is split into reads.
func TestLoadDatasetSmallReads(t *testing.T) {
	conv := `{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "bb"}]}`
	inputs := map[string]Format{
		"[\n  " + conv + ",\n  " + conv + ",\n  " + conv + "\n]\n":              FormatShareGPT,
		"[\n  " + conv + ",\n  " + conv + ",\n  {\"conversations\": 1}\n]\n":    FormatShareGPT,
		"[\n  " + conv + ",\n  " + conv + "\n  " + conv + "\n]\n":               FormatShareGPT,
		"[\n  " + conv + ",\n  " + conv + ",\n  {\"conversations\": [}]\n]\n":   FormatShareGPT,
		"[\n  " + conv + ",\n  " + conv + ",\n  {\"conversations\": [{\"from\"": FormatShareGPT,
	}
	for _, file := range []string{"sharegpt.json", "prompts.jsonl", "prompts.csv"} {
		data, err := os.ReadFile(filepath.Join(datasetDir, file))
		if err != nil {
			t.Fatal(err)
		}
		format, _ := FormatOf(file)
		inputs[string(data)] = format
	}
	for data, format := range inputs {
		want, wantErr := decodeDataset("x", format, strings.NewReader(data))
		for piece := 1; piece < 9; piece++ {
			got, err := decodeDataset("x", format, &smallReads{[]byte(data), piece})
			if errorText(err) != errorText(wantErr) {
				t.Fatalf("%.40q in reads of %d bytes: error %v, want %v", data, piece, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got.Records, want.Records) {
				t.Fatalf("%.40q in reads of %d bytes: records differ", data, piece)
			}
		}
	}
}

// smallReads reads data n bytes at a time.
type smallReads struct {
	data []byte
	n    int
}

func (c *smallReads) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}

func TestLoadDatasetReadError(t *testing.T) {
	fail := errors.New("disk on fire")
	for _, format := range formats {
		_, err := decodeDataset("x", format, io.MultiReader(strings.NewReader("[{\"prompt"), &brokenReader{fail}))
		if !errors.Is(err, fail) || !strings.HasPrefix(err.Error(), "x: reading: ") {
			t.Errorf("%s: error %v", format, err)
		}
	}
}

type brokenReader struct{ err error }

func (f *brokenReader) Read([]byte) (int, error) { return 0, f.err }

// TestDatasetsOpen opens one file from 1,000 goroutines at once.
func TestDatasetsOpen(t *testing.T) {
	var loads atomic.Int32
	s := &Datasets{load: func(ctx context.Context, path string, format Format) (*Dataset, error) {
		loads.Add(1)
		time.Sleep(10 * time.Millisecond) // let the other callers arrive
		return LoadDataset(ctx, path, format)
	}}
	abs, err := filepath.Abs(filepath.Join(datasetDir, "sharegpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	got := make([]*Dataset, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			path, format := filepath.Join(datasetDir, "sharegpt.json"), Format("")
			switch i % 3 {
			case 1:
				path = abs
			case 2:
				format = FormatShareGPT
			}
			got[i], errs[i] = s.Open(t.Context(), path, format)
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || got[i] != got[0] {
			t.Fatalf("caller %d: %p, %v; caller 0: %p", i, got[i], errs[i], got[0])
		}
	}
	if loads.Load() != 1 || len(got[0].Records) != 5 {
		t.Errorf("%d loads, %d records", loads.Load(), len(got[0].Records))
	}

	// Another format is another dataset.
	d, err := s.Open(t.Context(), filepath.Join(datasetDir, "sharegpt.json"), FormatJSONL)
	if err == nil || d != nil || loads.Load() != 2 {
		t.Errorf("ShareGPT as JSONL: %p, %v, %d loads", d, err, loads.Load())
	}
}

func TestDatasetsOpenError(t *testing.T) {
	var loads atomic.Int32
	s := &Datasets{load: func(ctx context.Context, path string, format Format) (*Dataset, error) {
		loads.Add(1)
		return LoadDataset(ctx, path, format)
	}}
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, []byte("{\"prompt\": \"a\"}\nnope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := path + ": record 2 (line 2, column 2): invalid character 'o' in literal null (expecting 'u')"
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if d, err := s.Open(t.Context(), path, ""); d != nil || errorText(err) != want {
				t.Errorf("Open: %p, %v; want %s", d, err, want)
			}
		})
	}
	wg.Wait()
	if loads.Load() != 1 {
		t.Errorf("%d loads", loads.Load())
	}
	// The zero value works, and a format error is not cached.
	var zero Datasets
	if _, err := zero.Open(t.Context(), "x.txt", ""); err == nil {
		t.Error("x.txt opened")
	}
	if d, err := zero.Open(t.Context(), filepath.Join(datasetDir, "prompts.csv"), ""); err != nil || len(d.Records) != 3 {
		t.Errorf("zero Datasets: %v", err)
	}
}

// TestDatasetTokens counts every record's tokens from many goroutines at
// once (run it with -race) under two tokenizers.
func TestDatasetTokens(t *testing.T) {
	for _, enc := range tokenizer.Encodings {
		tok, err := tokenizer.Load(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range []string{"sharegpt.json", "prompts.jsonl", "prompts.csv"} {
			d, err := LoadDataset(t.Context(), filepath.Join(datasetDir, file), "")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Go(func() {
					for k := range d.Records {
						i := (k + g) % len(d.Records)
						rec := d.Records[i]
						wantPrompt, _ := tok.Count(rec.Prompt)
						wantOutput := rec.OutputTokens
						if wantOutput == 0 && rec.Completion != "" {
							wantOutput, _ = tok.Count(rec.Completion)
						}
						p, err := d.PromptTokens(i, tok)
						if err != nil || p != wantPrompt || p == 0 {
							t.Errorf("%s %s record %d: prompt tokens %d, %v; want %d", enc, file, i, p, err, wantPrompt)
						}
						o, err := d.OutputTokens(i, tok)
						if err != nil || o != wantOutput {
							t.Errorf("%s %s record %d: output tokens %d, %v; want %d", enc, file, i, o, err, wantOutput)
						}
					}
				})
			}
			wg.Wait()
		}
	}
}

func TestDatasetTokensCached(t *testing.T) {
	d, err := LoadDataset(t.Context(), filepath.Join(datasetDir, "prompts.jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	tok := &countingTokenizer{name: "count"}
	for range 3 {
		for i := range d.Records {
			if _, err := d.PromptTokens(i, tok); err != nil {
				t.Fatal(err)
			}
			if _, err := d.OutputTokens(i, tok); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Every prompt once, and the completions of the two records without
	// output_tokens but with a completion.
	if got, want := tok.calls.Load(), int32(len(d.Records)+2); got != want {
		t.Errorf("%d counts, want %d", got, want)
	}
	// Record 1 has output_tokens: 64 and no completion.
	if n, err := d.OutputTokens(0, tok); n != 64 || err != nil {
		t.Errorf("record 1 output tokens %d, %v", n, err)
	}
	// Record 3 has neither.
	if n, err := d.OutputTokens(2, tok); n != 0 || err != nil {
		t.Errorf("record 3 output tokens %d, %v", n, err)
	}

	bad := &countingTokenizer{name: "bad", err: errors.New("boom")}
	path := filepath.Join(datasetDir, "prompts.jsonl")
	for range 2 {
		if _, err := d.PromptTokens(1, bad); errorText(err) != path+": record 2: counting prompt tokens: boom" {
			t.Errorf("brokenReader tokenizer: %v", err)
		}
	}
	if bad.calls.Load() != 2 {
		t.Errorf("a failed count was cached")
	}
	for _, i := range []int{-1, len(d.Records)} {
		if _, err := d.PromptTokens(i, tok); errorText(err) != fmt.Sprintf("%s: record index %d out of range [0, 5)", path, i) {
			t.Errorf("index %d: %v", i, err)
		}
		if _, err := d.OutputTokens(i, tok); err == nil {
			t.Errorf("index %d: no error", i)
		}
	}
}

// countingTokenizer counts one token a byte, and its calls to Count.
type countingTokenizer struct {
	name  string
	err   error
	calls atomic.Int32
}

func (c *countingTokenizer) Name() string                 { return c.name }
func (c *countingTokenizer) Encode(string) ([]int, error) { return nil, errors.New("not implemented") }
func (c *countingTokenizer) Decode([]int) (string, error) { return "", errors.New("not implemented") }
func (c *countingTokenizer) Count(text string) (int, error) {
	c.calls.Add(1)
	return len(text), c.err
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzLoad decodes arbitrary input in each format: no panic, an error
// that names the file, or records that each have a user message whose
// content is the prompt.
func FuzzLoad(f *testing.F) {
	for _, file := range []string{"sharegpt.json", "prompts.jsonl", "prompts.csv"} {
		data, err := os.ReadFile(filepath.Join(datasetDir, file))
		if err != nil {
			f.Fatal(err)
		}
		format, _ := FormatOf(file)
		for i, fm := range formats {
			if fm == format {
				f.Add(byte(i), data, 7)
			}
		}
	}
	f.Add(byte(0), []byte(`[{"conversations": [{"from": "gpt", "value": "a"}]}, {"conversations": [}]`), 3)
	f.Add(byte(1), []byte("{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}\n{\"prompt\": 1}"), 5)
	f.Add(byte(2), []byte("prompt,output_tokens\n\"a,\nb\",3\nc\n"), 2)
	f.Fuzz(func(t *testing.T, format byte, data []byte, piece int) {
		fm := formats[int(format)%len(formats)]
		d, err := decodeDataset("fuzz", fm, &smallReads{data, max(1, piece%64)})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(d.Records) == 0 {
			t.Fatal("no records and no error")
		}
		for i, rec := range d.Records {
			found := false
			for _, m := range rec.Messages {
				if m.Role == RoleUser {
					found = m.Content == rec.Prompt
					break
				}
			}
			if !found {
				t.Fatalf("record %d: prompt %q is not the first user message of %+v", i+1, rec.Prompt, rec.Messages)
			}
		}
	})
}
