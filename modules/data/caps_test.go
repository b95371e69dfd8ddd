package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDatasetThatNeverEnds loads a dataset from a device that never ends
// (through a link with a dataset's extension): a clear error, not a read
// until memory runs out.
func TestDatasetThatNeverEnds(t *testing.T) {
	link := filepath.Join(t.TempDir(), "zero.csv")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	_, err := LoadDataset(t.Context(), link, "")
	if err == nil || !strings.Contains(err.Error(), link+" is a device, not a regular file") {
		t.Errorf("error = %v, want one saying the file is a device", err)
	}
	if _, err := LoadDataset(t.Context(), t.TempDir(), FormatJSONL); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: error = %v", err)
	}
}

// TestDatasetTextCap refuses a record with a text longer than the cap as
// the record is read, before anything counts its tokens, naming the file,
// the record, its line and the cap; a text of exactly the cap loads.
func TestDatasetTextCap(t *testing.T) {
	const limit = 16
	atCap, overCap := strings.Repeat("a", limit), strings.Repeat("b", limit+1)
	for _, tc := range []struct {
		name, data string
		format     Format
		want       string // "" when the file loads
	}{
		{"sharegpt prompt", `[{"conversations":[{"from":"human","value":"` + atCap + `"}]},
{"conversations":[{"from":"human","value":"` + overCap + `"}]}]`, FormatShareGPT,
			"f: record 2 (line 2): message 1 (user) is 17 bytes, more than llmrun's limit of 16 bytes for a prompt or message (see docs/limits.md)"},
		{"sharegpt answer", `[{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"` + overCap + `"}]}]`, FormatShareGPT,
			"f: record 1 (line 1): message 2 (assistant) is 17 bytes"},
		{"jsonl prompt", "{\"prompt\":\"" + atCap + "\"}\n\n{\"prompt\":\"" + overCap + "\"}\n", FormatJSONL,
			"f: record 2 (line 3): message 1 (user) is 17 bytes"},
		{"jsonl system", `{"prompt":"hi","system":"` + overCap + `"}`, FormatJSONL,
			"f: record 1 (line 1): message 1 (system) is 17 bytes"},
		{"jsonl completion", `{"prompt":"hi","completion":"` + overCap + `"}`, FormatJSONL,
			"f: record 1 (line 1): the completion is 17 bytes"},
		{"csv prompt", "prompt\n" + atCap + "\n" + overCap + "\n", FormatCSV,
			"f: record 2 (line 3): message 1 (user) is 17 bytes"},
		{"at the cap", "prompt,completion\n" + atCap + "," + atCap + "\n", FormatCSV, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := decodeDatasetCapped("f", tc.format, strings.NewReader(tc.data), datasetCaps{text: limit, record: 1 << 20})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v, want the file loaded", err)
			case tc.want == "" && d.Records[0].Prompt != atCap:
				t.Fatalf("prompt %q, want %q", d.Records[0].Prompt, atCap)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("error %v, want one starting %q", err, tc.want)
			}
		})
	}
}

// TestDatasetRecordCap refuses a ShareGPT conversation, or a JSONL line,
// longer than the cap as it is read, naming the file, the record and its
// line; one within the cap loads.
func TestDatasetRecordCap(t *testing.T) {
	const limit = 200
	conv := func(text string) string { return `{"conversations":[{"from":"human","value":"` + text + `"}]}` }
	// The cap counts what precedes a conversation (its comma, white
	// space) too, and is checked before each read: these are well within
	// it, and well over it in reads shorter than the cap.
	within := strings.Repeat("a", limit-len(conv(""))-10)
	over := strings.Repeat("b", 10*limit)
	for _, tc := range []struct {
		name, data string
		format     Format
		want       string // "" when the file loads
	}{
		{"sharegpt", "[" + conv(within) + ",\n" + conv(over) + "]", FormatShareGPT,
			"f: record 2 (line 2): longer than 200 bytes"},
		{"sharegpt first", "[\n\n" + conv(over) + "]", FormatShareGPT,
			"f: record 1 (line 3): longer than 200 bytes"},
		{"sharegpt within", "[" + conv(within) + ",\n" + conv(within) + "]", FormatShareGPT, ""},
		{"jsonl", `{"prompt":"a"}` + "\n" + `{"prompt":"` + over + `"}`, FormatJSONL,
			"f: line 2: longer than 200 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, piece := range []int{1, 7, 64} {
				d, err := decodeDatasetCapped("f", tc.format, &smallReads{[]byte(tc.data), piece}, datasetCaps{text: limit, record: limit})
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("reads of %d: error %v, want the file loaded", piece, err)
				case tc.want == "" && len(d.Records) != 2:
					t.Fatalf("reads of %d: %d records, want 2", piece, len(d.Records))
				case tc.want != "" && errorText(err) != tc.want:
					t.Fatalf("reads of %d: error %v, want %q", piece, err, tc.want)
				}
			}
		})
	}
}
