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
	"hash"
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
	doc := make([]byte, 0, min(trailerSize(gz), maxDoc)+1)
	_, err := Decode(bytes.NewReader(gz), sum, maxDoc, func(r io.Reader) {
		for {
			if len(doc) == cap(doc) { // the trailer did not tell the size
				doc = append(doc, 0)[:len(doc)]
			}
			n, err := r.Read(doc[len(doc):cap(doc)])
			doc = doc[:len(doc)+n]
			if err != nil {
				return // Decode reads the error again
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// Decode hands decode the document gz holds as a stream, then checks it:
// it must unpack, hold at most maxDoc bytes (more is ErrTooLarge) and
// have the SHA-256 sum, the hex digest Pack gave; what decode left unread
// is read for the check. The document is never held: the SHA-256 is
// computed as its bytes pass. An error of the check is Decode's whatever
// decode made of the document, which the caller must then not use.
// Decode returns the document's size.
func Decode(gz io.Reader, sum string, maxDoc int64, decode func(doc io.Reader)) (int64, error) {
	zr, err := gzip.NewReader(gz)
	if err != nil {
		return 0, fmt.Errorf("the result does not unpack: %w", err)
	}
	doc := &checkedReader{r: io.LimitReader(zr, maxDoc+1), max: maxDoc, hash: sha256.New()}
	decode(doc)
	if _, err := io.Copy(io.Discard, doc); err != nil {
		return doc.n, err
	}
	if got := hex.EncodeToString(doc.hash.Sum(nil)); got != sum {
		return doc.n, fmt.Errorf("the result's SHA-256 is %s, not the %s it was packed with: it was altered", got, sum)
	}
	return doc.n, nil
}

// checkedReader reads a document out of its gzip stream, hashing and
// counting its bytes; its first error (the stream is damaged, the
// document larger than max) is returned by every read after it.
type checkedReader struct {
	r    io.Reader
	max  int64
	n    int64
	hash hash.Hash
	err  error
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		c.err = fmt.Errorf("%w: it unpacks to more than %d bytes", ErrTooLarge, c.max)
		return 0, c.err
	}
	c.hash.Write(p[:n])
	if err != nil && err != io.EOF {
		c.err = fmt.Errorf("the result does not unpack: %w", err)
		return n, c.err
	}
	return n, err
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
