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
			d, err := decodeDatasetCapped("f", tc.format, strings.NewReader(tc.data), limit)
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
