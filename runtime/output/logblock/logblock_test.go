package logblock

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/capped"
)

// block writes doc as a block and returns its lines.
func block(t *testing.T, runID, instance string, doc []byte) []string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, runID, instance, doc); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// foundBlock is a block and its result file, read whole.
type foundBlock struct {
	Block
	Doc []byte
}

// readDoc is a parse for Read that keeps the result file.
func readDoc(_ Block, doc io.Reader) ([]byte, error) { return io.ReadAll(doc) }

// readAll reads every block of log, keeping each with its result file.
func readAll(log io.Reader, maxDoc int64, budget *capped.Budget) ([]foundBlock, error) {
	var blocks []foundBlock
	_, err := Read(log, maxDoc, budget, readDoc, func(b Block, doc []byte) error {
		blocks = append(blocks, foundBlock{b, doc})
		return nil
	})
	return blocks, err
}

// Two blocks written by two pods come back whole from their logs
// concatenated, from their lines interleaved, and with kubectl's
// "[pod/…]" prefix; other lines are skipped.
func TestReadFindsEveryBlock(t *testing.T) {
	// Incompressible, so that the blocks have many lines.
	docs := [][]byte{make([]byte, 1000), []byte(`{"schema_version":3}`)}
	rand.Read(docs[0])
	a, b := block(t, "r1", "0", docs[0]), block(t, "r1", "1", docs[1])
	if len(a) < 10 {
		t.Fatalf("a block of %d lines; the test wants many", len(a))
	}
	prefixed := func(pod string, lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = "[pod/" + pod + "/llmrun] " + l
		}
		return out
	}
	var interleaved []string
	for i := range max(len(a), len(b)) {
		if i < len(a) {
			interleaved = append(interleaved, a[i])
		}
		if i < len(b) {
			interleaved = append(interleaved, b[i], "level=INFO msg=unrelated")
		}
	}
	logs := map[string][]string{
		"concatenated": append(append([]string{"summary line", "llmrun-result is mentioned here"}, a...), b...),
		"interleaved":  interleaved,
		"prefixed":     append(prefixed("job-0-abc", a), prefixed("job-1-def", b)...),
	}
	for name, lines := range logs {
		t.Run(name, func(t *testing.T) {
			log := []byte(strings.Join(lines, "\n") + "\n")
			blocks, err := readAll(bytes.NewReader(log), 1<<20, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(blocks) != 2 {
				t.Fatalf("%d blocks, want 2", len(blocks))
			}
			slices.SortFunc(blocks, func(x, y foundBlock) int { return strings.Compare(x.Instance, y.Instance) })
			for i, want := range []foundBlock{{Block{RunID: "r1", Instance: "0"}, docs[0]}, {Block{RunID: "r1", Instance: "1"}, docs[1]}} {
				got := blocks[i]
				if got.RunID != want.RunID || got.Instance != want.Instance || !bytes.Equal(got.Doc, want.Doc) {
					t.Errorf("block %d: %s with %d bytes, want %s with %d", i, got.Name(), len(got.Doc), want.Name(), len(want.Doc))
				}
			}
		})
	}
	if n, err := Read(strings.NewReader(`{"meta":{}}`), 1<<20, nil, readDoc, func(Block, []byte) error { return nil }); n != 0 || err != nil {
		t.Errorf("a result file: %d blocks, error %v; want none", n, err)
	}
}

// A block the log cut short or altered is an error naming the instance.
func TestReadRefusesDamagedBlocks(t *testing.T) {
	doc := make([]byte, 500)
	rand.Read(doc)
	lines := block(t, "r7", "2", doc)
	last := len(lines) - 1
	otherSum := strings.Fields(block(t, "r7", "2", []byte("another result"))[0])[4]
	forged := strings.Replace(lines[0], strings.Fields(lines[0])[4], otherSum, 1)
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"no end line", lines[:last], "run r7 instance 2: the block is cut short: no end line after its begin line (line 1) and " + fmt.Sprint(last-1) + " of its " + fmt.Sprint(last-1) + " data lines"},
		{"a line lost", append(append([]string{}, lines[:2]...), lines[3:]...), "run r7 instance 2: line 3: data line 3 where line 2 was due"},
		{"lines missing at the end", append(append([]string{}, lines[:last-1]...), lines[last]), "the block is cut short: " + fmt.Sprint(last-2) + " of its " + fmt.Sprint(last-1)},
		{"no begin line", lines[1:], "run r7 instance 2: line 1: data line 1 without its begin line: the log lost the block's start"},
		{"only the end line", lines[last:], "run r7 instance 2: line 1: an end line without its begin line"},
		{"not base64", append(append([]string{lines[0]}, strings.Replace(lines[1], " 1 ", " 1 !!", 1)), lines[2:]...), "data line 1: not base64"},
		{"another file's checksum", append([]string{forged}, lines[1:]...), "run r7 instance 2 (begun at line 1): the result's SHA-256 is"},
		{"begun twice", append([]string{lines[0]}, lines...), "a second block begins before the first ended"},
		{"single instance", block(t, "r8", NoInstance, doc)[:2], "run r8: the block is cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(strings.NewReader(strings.Join(tt.lines, "\n")), 1<<20, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := readAll(strings.NewReader(strings.Join(lines, "\n")), 100, nil); err == nil || !strings.Contains(err.Error(), "more than 100 bytes") {
		t.Errorf("a block larger than the bound: %v", err)
	}
	if err := Write(&bytes.Buffer{}, "two words", "0", doc); err == nil {
		t.Error("Write took a run id with a space")
	}
}

// A line of another process longer than any block's (a script logging a
// large object) is skipped, not an error that loses every block.
func TestReadSkipsLongLines(t *testing.T) {
	doc := []byte(`{"serving":{"requests":3}}`)
	lines := append([]string{"console: " + strings.Repeat("x", 3<<20)}, block(t, "r1", "0", doc)...)
	lines = append(lines, strings.Repeat("y", 200<<10))
	blocks, err := readAll(strings.NewReader(strings.Join(lines, "\n")), 1<<20, nil)
	if err != nil || len(blocks) != 1 || !bytes.Equal(blocks[0].Doc, doc) {
		t.Fatalf("Read = %v, %v; want the one block", blocks, err)
	}
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Each block is handed on when its end line is read, before the next
// block's lines are: a log of many blocks holds one unpacked at a time.
func TestReadHandsEachBlockOnAtItsEnd(t *testing.T) {
	var log bytes.Buffer
	var ends []int // the offset of each block's end
	for i := range 3 {
		doc := make([]byte, 300<<10) // incompressible: blocks longer than Read's buffer
		rand.Read(doc)
		if err := Write(&log, "r1", fmt.Sprint(i), doc); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, log.Len())
	}
	src := &countingReader{r: bytes.NewReader(log.Bytes())}
	found := 0
	n, err := Read(src, 1<<20, nil, readDoc, func(b Block, _ []byte) error {
		if next := found + 1; next < len(ends) && src.n >= ends[next] {
			t.Errorf("%s handed on after the log was read to byte %d, past the end of the next block (%d)", b.Name(), src.n, ends[next])
		}
		found++
		return nil
	})
	if err != nil || n != 3 || found != 3 {
		t.Fatalf("Read = %d, %v, %d found; want 3 blocks", n, err, found)
	}
}

// The blocks of a log together may not unpack to more than the budget:
// the block that would pass it is refused before it is unpacked whole,
// naming the cap.
func TestReadRefusesBlocksBeyondTheBudget(t *testing.T) {
	var log bytes.Buffer
	for i := range 3 {
		if err := Write(&log, "r1", fmt.Sprint(i), bytes.Repeat([]byte("x"), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	budget := capped.NewBudget(2500, "the result files one merge unpacks")
	var found []string
	_, err := Read(bytes.NewReader(log.Bytes()), 1<<20, budget, readDoc, func(b Block, _ []byte) error {
		found = append(found, b.Instance)
		return nil
	})
	want := "run r1 instance 2 (begun at line 7): more than 2500 bytes in all, the most llmrun takes of the result files one merge unpacks"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if !slices.Equal(found, []string{"0", "1"}) {
		t.Errorf("found %v before the error, want instances 0 and 1", found)
	}
}
