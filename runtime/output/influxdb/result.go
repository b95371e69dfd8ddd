package influxdb

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api/write"

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
	chunks, err := encodeResult(doc, resultChunkChars)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256(doc)
	sum := hex.EncodeToString(digest[:])
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

// encodeResult gzips doc, encodes it in standard base64 and cuts that
// into chunks of at most chunkChars characters: at least one chunk, as
// the gzip stream of even an empty document is not empty.
func encodeResult(doc []byte, chunkChars int) ([]string, error) {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	if _, err := w.Write(doc); err != nil {
		return nil, fmt.Errorf("compressing the result: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compressing the result: %w", err)
	}
	return splitChunks(base64.StdEncoding.EncodeToString(z.Bytes()), chunkChars), nil
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
	if len(chunks) == 0 {
		return nil, errors.New("no chunk")
	}
	if size < 0 || size > summary.MaxResultFileSize {
		return nil, fmt.Errorf("a result of %d bytes: want 0 to %d", size, summary.MaxResultFileSize)
	}
	var joined bytes.Buffer
	for _, c := range chunks {
		joined.WriteString(c)
	}
	z, err := base64.StdEncoding.DecodeString(joined.String())
	if err != nil {
		return nil, fmt.Errorf("the chunks are not base64: %w", err)
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("the chunks are not gzip: %w", err)
	}
	doc, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return nil, fmt.Errorf("decompressing: %w", err)
	}
	if int64(len(doc)) != size {
		return nil, fmt.Errorf("%d bytes, want %d", len(doc), size)
	}
	digest := sha256.Sum256(doc)
	if got := hex.EncodeToString(digest[:]); got != sum {
		return nil, fmt.Errorf("sha256 %s, want %s", got, sum)
	}
	return doc, nil
}
