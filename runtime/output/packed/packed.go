// Package packed is how a result file travels where it cannot go as a
// file: gzipped, with the SHA-256 of the file, so that what unpacks it
// knows it has all of it, unaltered. The InfluxDB output's llm_result
// points and the result blocks of a log (runtime/output/logblock) carry
// a result file packed, each in its own text encoding.
package packed

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// Pack returns doc gzipped, and the hex SHA-256 of doc.
func Pack(doc []byte) (gz []byte, sum string, err error) {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(doc); err != nil {
		return nil, "", fmt.Errorf("compressing the result: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("compressing the result: %w", err)
	}
	digest := sha256.Sum256(doc)
	return b.Bytes(), hex.EncodeToString(digest[:]), nil
}

// ErrTooLarge is the error of Unpack when the document is larger than
// its bound.
var ErrTooLarge = errors.New("the result is too large")

// Unpack returns the document gz holds, at most maxDoc bytes (more is
// ErrTooLarge), and checks it against sum, the hex SHA-256 Pack gave. The
// document is read into one buffer of the size the gzip trailer gives
// (which the gzip reader checks), not into one grown by doubling: a
// document near maxDoc takes maxDoc bytes of memory, not twice as many.
func Unpack(gz []byte, sum string, maxDoc int64) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("the result does not unpack: %w", err)
	}
	lr := io.LimitReader(r, maxDoc+1)
	doc := make([]byte, min(trailerSize(gz), maxDoc)+1)
	n := 0
	for err == nil && n < len(doc) {
		var m int
		m, err = lr.Read(doc[n:])
		n += m
	}
	doc = doc[:n]
	if err == nil { // the buffer is full: the trailer did not tell the size
		var rest []byte
		rest, err = io.ReadAll(lr)
		doc = append(doc, rest...)
	}
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("the result does not unpack: %w", err)
	}
	if int64(len(doc)) > maxDoc {
		return nil, fmt.Errorf("%w: it unpacks to more than %d bytes", ErrTooLarge, maxDoc)
	}
	digest := sha256.Sum256(doc)
	if got := hex.EncodeToString(digest[:]); got != sum {
		return nil, fmt.Errorf("the result's SHA-256 is %s, not the %s it was packed with: it was altered", got, sum)
	}
	return doc, nil
}

// trailerSize is the size of the document gz holds as its gzip trailer
// says (ISIZE: the size modulo 2^32, exact for a document under 4 GiB),
// 0 when gz is too short to have one.
func trailerSize(gz []byte) int64 {
	if len(gz) < 4 {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(gz[len(gz)-4:]))
}
