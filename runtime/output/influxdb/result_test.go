package influxdb

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/internal/influxtest"
)

func TestSplitChunks(t *testing.T) {
	tests := []struct {
		name string
		s    string
		size int
		want []string
	}{
		{"empty", "", 4, nil},
		{"shorter than a chunk", "abc", 4, []string{"abc"}},
		{"exactly one chunk", "abcd", 4, []string{"abcd"}},
		{"one character more", "abcde", 4, []string{"abcd", "e"}},
		{"exactly two chunks", "abcdefgh", 4, []string{"abcd", "efgh"}},
		{"chunks of one", "abc", 1, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitChunks(tt.s, tt.size)
			if !slices.Equal(got, tt.want) {
				t.Errorf("splitChunks(%q, %d) = %q, want %q", tt.s, tt.size, got, tt.want)
			}
			if strings.Join(got, "") != tt.s {
				t.Errorf("the chunks %q do not join to %q", got, tt.s)
			}
		})
	}
}

// randomDocument is n bytes that gzip cannot shrink much, as hex.
func randomDocument(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return []byte(hex.EncodeToString(b)[:n])
}

// digest is doc's SHA-256 in hex.
func digest(doc []byte) string {
	d := sha256.Sum256(doc)
	return hex.EncodeToString(d[:])
}

// A document round-trips through the chunks, whatever their size
// against its encoding: exactly one chunk, one character over, several.
func TestResultChunksRoundTrip(t *testing.T) {
	doc := randomDocument(t, 5000)
	one, _, err := encodeResult(doc, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	encoded := len(one[0])
	tests := []struct {
		name       string
		doc        []byte
		chunkChars int
		chunks     int
	}{
		{"empty document", nil, 100, 1},
		{"exactly one chunk", doc, encoded, 1},
		{"one character over one chunk", doc, encoded - 1, 2},
		{"exactly two chunks", doc, encoded / 2, 2 + encoded%2},
		{"many chunks", doc, 100, (encoded + 99) / 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks, _, err := encodeResult(tt.doc, tt.chunkChars)
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) != tt.chunks {
				t.Errorf("%d chunks, want %d", len(chunks), tt.chunks)
			}
			for i, c := range chunks {
				if len(c) > tt.chunkChars || len(c) == 0 {
					t.Errorf("chunk %d has %d characters, want 1 to %d", i, len(c), tt.chunkChars)
				}
			}
			got, err := decodeResult(chunks, int64(len(tt.doc)), digest(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.doc) {
				t.Errorf("decoded %d bytes, not the %d encoded", len(got), len(tt.doc))
			}
		})
	}
}

// Chunks that are not the whole, or not the document the size and
// checksum describe, are an error that says so.
func TestResultChunksDamaged(t *testing.T) {
	doc := randomDocument(t, 3000)
	chunks, _, err := encodeResult(doc, 500)
	if err != nil {
		t.Fatal(err)
	}
	sum := digest(doc)
	tests := []struct {
		name   string
		chunks []string
		size   int64
		sum    string
		want   string
	}{
		{"no chunk", nil, int64(len(doc)), sum, "no chunk"},
		{"a chunk left out", slices.Delete(slices.Clone(chunks), 1, 2), int64(len(doc)), sum, "does not unpack"},
		{"the last chunk left out", chunks[:len(chunks)-1], int64(len(doc)), sum, "does not unpack"},
		{"another checksum", chunks, int64(len(doc)), digest([]byte("other")), "SHA-256 is " + sum + ", not"},
		{"another size", chunks, int64(len(doc)) - 1, sum, fmt.Sprintf("more than %d bytes", len(doc)-1)},
		{"a size beyond a result file's", chunks, 1 << 40, sum, "want 0 to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeResult(tt.chunks, tt.size, tt.sum)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestStoredResults runs the tests of llm_result on one server.
func TestStoredResults(t *testing.T) {
	t.Parallel()
	s := influxtest.Start(t)
	t.Run("round trip of several chunks", func(t *testing.T) { t.Parallel(); testResultRoundTrip(t, s) })
	t.Run("a missing chunk", func(t *testing.T) { t.Parallel(); testResultMissingChunk(t, s) })
	t.Run("results beyond the budget", func(t *testing.T) { t.Parallel(); testResultsBeyondBudget(t, s) })
}

// storedDocument is a stored result read back whole.
type storedDocument struct {
	Instance string
	Document []byte
}

// readDocument is a parse for ReadResults that keeps the document.
func readDocument(_ StoredResult, doc io.Reader) ([]byte, error) { return io.ReadAll(doc) }

// readResults reads the stored results of a run, keeping every one.
func readResults(ctx context.Context, cfg Config, runID string, budget *capped.Budget) ([]storedDocument, error) {
	var results []storedDocument
	_, err := ReadResults(ctx, cfg, runID, budget, readDocument, func(r StoredResult, doc []byte) error {
		results = append(results, storedDocument{r.Instance, doc})
		return nil
	})
	return results, err
}

// The results of a run together may not be more than the budget: the
// result that would pass it is refused, before it is unpacked, naming
// the cap, and the results before it were handed on one at a time.
func testResultsBeyondBudget(t *testing.T, s *influxtest.Server) {
	run := testRun(t)
	var sizes []int64
	for _, inst := range []string{"0", "1"} {
		run.Tags = map[string]string{"instance": inst}
		o := startOutput(t, testConfig(s), run)
		sum := testSummary(run.Start)
		doc, err := resultDocument(sum)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, int64(len(doc)))
		if rep := o.Finish(context.Background(), sum); rep.Dropped != 0 {
			t.Fatalf("report %+v, want nothing dropped", rep)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	total := sizes[0] + sizes[1] - 1
	budget := capped.NewBudget(total, "the result files one merge unpacks")
	var found []string
	n, err := ReadResults(ctx, testConfig(s), run.ID, budget, readDocument, func(r StoredResult, _ []byte) error {
		found = append(found, r.Instance)
		return nil
	})
	want := fmt.Sprintf("the result instance 1 of run %s stored, of %d bytes: more than %d bytes in all, the most llmrun takes of the result files one merge unpacks", run.ID, sizes[1], total)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one saying %q", err, want)
	}
	if n != 1 || !slices.Equal(found, []string{"0"}) {
		t.Errorf("%d results handed on (%v), want instance 0's only", n, found)
	}
}

// A result file larger than one chunk is stored as several llm_result
// points, in writes of at most a batch, tagged as the run's other points,
// and read back byte for byte.
func testResultRoundTrip(t *testing.T, s *influxtest.Server) {
	run := testRun(t)
	run.Tags = map[string]string{"env": "ci", "instance": "1"}
	cfg := testConfig(s)
	cfg.Batch = 1 // a write per chunk
	o := startOutput(t, cfg, run)
	sum := testSummary(run.Start)
	// Random tag values gzip cannot shrink: some 130 KB of base64.
	sum.Meta.Tags = map[string]string{"noise": string(randomDocument(t, 200_000))}
	want, err := resultDocument(sum)
	if err != nil {
		t.Fatal(err)
	}
	if rep := o.Finish(context.Background(), sum); rep.Dropped != 0 {
		t.Fatalf("report %+v, want nothing dropped", rep)
	}
	rows := selectRows(t, s, fmt.Sprintf(`SELECT * FROM llm_result WHERE run_id='%s'`, run.ID))
	if len(rows) < 2 {
		t.Fatalf("%d llm_result points, want a result of some 130 KB in several chunks", len(rows))
	}
	for _, r := range rows {
		data, _ := r["data"].(string)
		if r["testid"] != "chat" || r["env"] != "ci" || r["instance"] != "1" || r["chunks"] != float64(len(rows)) ||
			r["bytes"] != float64(len(want)) || r["sha256"] != digest(want) || len(data) == 0 || len(data) > resultChunkChars {
			t.Errorf("chunk %v: tags testid %v, env %v, instance %v; chunks %v, bytes %v, sha256 %v, %d characters of data",
				r["chunk"], r["testid"], r["env"], r["instance"], r["chunks"], r["bytes"], r["sha256"], len(data))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := readResults(ctx, testConfig(s), run.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Instance != "1" || !bytes.Equal(got[0].Document, want) {
		t.Fatalf("read %d results, want instance 1's %d bytes", len(got), len(want))
	}
	if none, err := readResults(ctx, testConfig(s), run.ID+"-other", nil); err != nil || len(none) != 0 {
		t.Errorf("another run: %d results, error %v; want none, no error", len(none), err)
	}
}

// A result one of whose chunks is lost is an error naming its instance
// and the chunk.
func testResultMissingChunk(t *testing.T, s *influxtest.Server) {
	run := testRun(t)
	run.Tags = map[string]string{"instance": "2"}
	o := startOutput(t, testConfig(s), run)
	sum := testSummary(run.Start)
	sum.Meta.Tags = map[string]string{"noise": string(randomDocument(t, 110_000))}
	if rep := o.Finish(context.Background(), sum); rep.Dropped != 0 {
		t.Fatalf("report %+v, want nothing dropped", rep)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.InfluxQL(ctx, fmt.Sprintf(`DELETE FROM llm_result WHERE run_id='%s' AND chunk='1'`, run.ID)); err != nil {
		t.Fatal(err)
	}
	_, err := readResults(ctx, testConfig(s), run.ID, nil)
	want := fmt.Sprintf("the result instance 2 of run %s stored is incomplete or damaged: 1 of its", run.ID)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "missing (chunk 1)") {
		t.Errorf("error %v, want one saying %q and naming chunk 1", err, want)
	}
}

// Points that are not chunks of one whole result are refused with what
// is wrong with them.
func TestStoredChunks(t *testing.T) {
	doc := []byte(`{"schema_version":3}`)
	chunks, _, err := encodeResult(doc, 8)
	if err != nil {
		t.Fatal(err)
	}
	columns := []string{"time", "chunk", "chunks", "bytes", "sha256", "data", "instance"}
	point := func(i int, count int, sum string) []any {
		return []any{json.Number("1"), strconv.Itoa(i), json.Number(strconv.Itoa(count)), json.Number(strconv.Itoa(len(doc))), sum, chunks[i], "1"}
	}
	all := func() [][]any {
		var rows [][]any
		for i := range chunks {
			rows = append(rows, point(i, len(chunks), digest(doc)))
		}
		return rows
	}
	tests := []struct {
		name string
		rows [][]any
		want string // "" for the document
	}{
		{"every chunk, in any order", append(all()[1:], all()[0]), ""},
		{"a chunk twice", append(all(), all()[0]), ""},
		{"the first chunk missing", all()[1:], fmt.Sprintf("1 of its %d chunks are missing (chunk 0)", len(chunks))},
		{"a chunk of another result", append(all()[1:], point(0, len(chunks), digest([]byte("x")))), "chunk 0 is of another result"},
		{"a chunk beyond the count", append(all(), point(1, 1, digest(doc))), "chunk 1 of 1"},
		{"a chunk tag that is no index", [][]any{{json.Number("1"), "first", json.Number("1"), json.Number("3"), "ab", "x", "1"}}, `chunk tag is "first"`},
		{"no checksum", [][]any{{json.Number("1"), "0", json.Number("1"), json.Number("3"), nil, "x", "1"}}, "lacks its chunks, bytes or sha256"},
		{"a short row", [][]any{{json.Number("1")}}, "a row of 1 values for 7 columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := &storedParts{chunks: map[int]string{}}
			var err error
			for _, row := range tt.rows {
				var c storedChunk
				if c, err = resultChunk(columns, row); err == nil {
					err = parts.add(c)
				}
				if err != nil {
					break
				}
			}
			var got []byte
			if err == nil {
				got, err = StoredResult{parts: parts}.Unpack()
			}
			switch {
			case tt.want == "" && (err != nil || !bytes.Equal(got, doc)):
				t.Errorf("got %q, error %v; want the document", got, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
