package influxdb

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/runtime/output/packed"
	"github.com/llmrun/llmrun/runtime/summary"
)

// The llm_result points (mResult) hold a run's whole result file, for
// llmrun merge --influxdb to merge the instances of a run exactly: the
// JSON gzipped, in base64, cut into chunks, one point per chunk.
const (
	// resultChunkChars is the most characters of one chunk: under the
	// 64 KiB a string field may hold in InfluxDB 1.x and 2.x.
	resultChunkChars = 60_000
	// resultPointsPerWrite is the most llm_result points one write
	// carries, some 3.8 MB: well under InfluxDB 1.8's default bound on a
	// write's body (25 MB).
	resultPointsPerWrite = 64
)

// resultPoints are the llm_result points of a run's result document (its
// JSON as the result file holds it), at time at, in groups of at most
// perWrite (and resultPointsPerWrite): one point per chunk, tagged with the run's tags
// and the chunk's index, each with the chunk count, the document's size
// and its SHA-256, so that a reader knows when it has all of it.
func resultPoints(doc []byte, tags runTags, at time.Time, perWrite int) ([][]*write.Point, error) {
	perWrite = max(1, min(perWrite, resultPointsPerWrite))
	chunks, sum, err := encodeResult(doc, resultChunkChars)
	if err != nil {
		return nil, err
	}
	var groups [][]*write.Point
	for i, c := range chunks {
		if i%perWrite == 0 {
			groups = append(groups, nil)
		}
		p := tags.point(mResult, at, "chunk", strconv.Itoa(i)).
			AddField("data", c).AddField("chunks", len(chunks)).AddField("bytes", len(doc)).AddField("sha256", sum)
		groups[len(groups)-1] = append(groups[len(groups)-1], p)
	}
	return groups, nil
}

// resultDocument is the summary as a result file holds it.
func resultDocument(s *summary.Summary) ([]byte, error) {
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeResult packs doc (gzip), encodes it in standard base64 and cuts
// that into chunks of at most chunkChars characters: at least one chunk,
// as the gzip stream of even an empty document is not empty. sum is the
// document's SHA-256.
func encodeResult(doc []byte, chunkChars int) (chunks []string, sum string, err error) {
	gz, sum, err := packed.Pack(doc)
	if err != nil {
		return nil, "", err
	}
	return splitChunks(base64.StdEncoding.EncodeToString(gz), chunkChars), sum, nil
}

// splitChunks cuts s into pieces of size characters, the last one
// shorter; none when s is empty.
func splitChunks(s string, size int) []string {
	var chunks []string
	for len(s) > size {
		chunks = append(chunks, s[:size])
		s = s[size:]
	}
	if s != "" {
		chunks = append(chunks, s)
	}
	return chunks
}

// decodeResult joins the chunks encodeResult made, decodes and
// decompresses them, and checks that the document has size bytes (at
// most summary.MaxResultFileSize) and the SHA-256 sum (hex).
func decodeResult(chunks []string, size int64, sum string) ([]byte, error) {
	var doc []byte
	var readErr error
	if err := streamResult(chunks, size, sum, func(r io.Reader) { doc, readErr = io.ReadAll(r) }); err != nil {
		return nil, err
	}
	return doc, readErr
}

// streamResult hands decode the document the chunks encodeResult made
// hold, as a stream, decoded and decompressed as decode reads, then
// checks that it has size bytes (at most summary.MaxResultFileSize) and
// the SHA-256 sum (hex). An error of the check is streamResult's whatever
// decode made of the document, which must then not be used.
func streamResult(chunks []string, size int64, sum string, decode func(io.Reader)) error {
	if len(chunks) == 0 {
		return errors.New("no chunk")
	}
	if size < 0 || size > summary.MaxResultFileSize {
		return fmt.Errorf("a result of %d bytes: want 0 to %d", size, summary.MaxResultFileSize)
	}
	parts := make([]io.Reader, len(chunks))
	for i, c := range chunks {
		parts[i] = strings.NewReader(c)
	}
	n, err := packed.Decode(base64.NewDecoder(base64.StdEncoding, io.MultiReader(parts...)), sum, size, decode)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%d bytes, want %d", n, size)
	}
	return nil
}
