// Package logblock carries a result file through a log: "llmrun run --out
// json=-" prints it to standard output as a block of marked lines after
// the summary, and "llmrun merge" finds the blocks again in what
// "kubectl logs" (or any log collector) gathered of several processes.
//
// A block is the result file gzipped, in base64, cut into numbered lines
// between a begin and an end line. Every line starts with Marker and
// names the run and the instance, so that lines prefixed by a log
// collector ("[pod/x/llmrun] ", a timestamp) or interleaved with other
// processes' lines still parse; the begin line carries the SHA-256 of the
// result file and the number of lines, so that a block cut short or
// altered is an error naming its instance, never a wrong merge.
//
//	llmrun-result 3f9a… 0 begin sha256=… lines=12
//	llmrun-result 3f9a… 0 1 H4sIAAAAAAAA/+y9…
//	…
//	llmrun-result 3f9a… 0 end
package logblock

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/runtime/output/packed"
)

// Marker starts every line of a block.
const Marker = "llmrun-result"

// NoInstance is the instance field of a block written by a run that is
// not one of several instances.
const NoInstance = "-"

// lineBytes is how many bytes of the gzipped file one line carries: 96
// base64 characters, short enough for any log collector's line limit.
const lineBytes = 72

// Block is one result file found in a log.
type Block struct {
	RunID    string
	Instance string // an instance index, or NoInstance
	// Doc is the result file, checked against the block's SHA-256.
	Doc []byte
}

// Name says which block this is in errors: "run 3f9a… instance 2".
func (b Block) Name() string {
	if b.Instance == NoInstance {
		return "run " + b.RunID
	}
	return "run " + b.RunID + " instance " + b.Instance
}

// Write writes doc, a result file, to w as one block for the run and the
// instance (NoInstance when the run is not one of several), in a single
// write so that the block's lines stay together.
func Write(w io.Writer, runID, instance string, doc []byte) error {
	if runID == "" || strings.ContainsAny(runID, " \t\n") || instance == "" || strings.ContainsAny(instance, " \t\n") {
		return fmt.Errorf("result block: run id %q and instance %q must be single words", runID, instance)
	}
	packedDoc, sum, err := packed.Pack(doc)
	if err != nil {
		return fmt.Errorf("result block: %w", err)
	}
	lines := (len(packedDoc) + lineBytes - 1) / lineBytes
	prefix := Marker + " " + runID + " " + instance + " "
	var out bytes.Buffer
	fmt.Fprintf(&out, "%sbegin sha256=%s lines=%d\n", prefix, sum, lines)
	for i := range lines {
		chunk := packedDoc[i*lineBytes : min((i+1)*lineBytes, len(packedDoc))]
		fmt.Fprintf(&out, "%s%d %s\n", prefix, i+1, base64.StdEncoding.EncodeToString(chunk))
	}
	fmt.Fprintf(&out, "%send\n", prefix)
	if _, err := w.Write(out.Bytes()); err != nil {
		return fmt.Errorf("result block: %w", err)
	}
	return nil
}

// readLine returns the next line of br, without its newline. A line
// longer than br's buffer is no block's (their lines are short, whatever
// a log collector puts before them): it comes back empty, the rest of it
// skipped, so that a process's long log line does not stop the reading.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
		line = nil
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	return bytes.TrimRight(line, "\r\n"), err
}

// Read finds every block in log and hands each to found as soon as its
// end line is read, in the order the blocks end: the block's Doc is valid
// only during the call, so that a log of many blocks never holds more
// than one unpacked result file. maxDoc bounds each result file once
// unpacked, budget all of them together (nil: no bound beyond maxDoc);
// the budget is asked before a block is unpacked. A block cut short (no
// begin or end line, a line missing), a line that does not decode, or a
// file whose SHA-256 is not the begin line's is an error naming the
// block's run and instance and the line; lines without Marker are
// skipped, as is the log's rest after an error of found. Read returns how
// many blocks it found.
func Read(log io.Reader, maxDoc int64, budget *capped.Budget, found func(Block) error) (int, error) {
	var (
		open   = map[string]*pending{}
		order  []*pending // the open blocks, by their begin lines
		blocks int
		lineNo int
		br     = bufio.NewReaderSize(log, 64<<10)
	)
	for {
		line, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return blocks, fmt.Errorf("reading the log: line %d: %w", lineNo+1, err)
		}
		lineNo++
		if !bytes.Contains(line, []byte(Marker+" ")) {
			continue // most of a log: no string made of it
		}
		f := fieldsAfterMarker(string(line))
		if len(f) < 3 {
			continue
		}
		b := Block{RunID: f[0], Instance: f[1]}
		key := f[0] + " " + f[1]
		p := open[key]
		switch f[2] {
		case "begin":
			if p != nil {
				return blocks, fmt.Errorf("%s: line %d: a second block begins before the first ended (%s)", b.Name(), lineNo, p.progress())
			}
			p = &pending{Block: b, beginLine: lineNo}
			if err := p.begin(f[3:]); err != nil {
				return blocks, fmt.Errorf("%s: line %d: %w", b.Name(), lineNo, err)
			}
			open[key] = p
			order = append(order, p)
		case "end":
			if p == nil {
				return blocks, fmt.Errorf("%s: line %d: an end line without its begin line: the log lost the block's start", b.Name(), lineNo)
			}
			delete(open, key)
			order = slices.DeleteFunc(order, func(o *pending) bool { return o == p })
			if err := p.end(maxDoc, budget); err != nil {
				return blocks, fmt.Errorf("%s (begun at line %d): %w", b.Name(), p.beginLine, err)
			}
			blocks++
			if err := found(p.Block); err != nil {
				return blocks, err
			}
		default:
			if _, err := strconv.Atoi(f[2]); err != nil {
				continue // prose that mentions the marker
			}
			if p == nil {
				return blocks, fmt.Errorf("%s: line %d: data line %s without its begin line: the log lost the block's start", b.Name(), lineNo, f[2])
			}
			if err := p.add(f[2:]); err != nil {
				return blocks, fmt.Errorf("%s: line %d: %w", b.Name(), lineNo, err)
			}
		}
	}
	if len(order) > 0 {
		p := order[0]
		return blocks, fmt.Errorf("%s: the block is cut short: no end line after its begin line (line %d) and %s", p.Name(), p.beginLine, p.progress())
	}
	return blocks, nil
}

// fieldsAfterMarker are the words after Marker on a line, nil when the
// line has none.
func fieldsAfterMarker(line string) []string {
	i := strings.Index(line, Marker+" ")
	if i < 0 {
		return nil
	}
	return strings.Fields(line[i+len(Marker)+1:])
}

// pending is a block being read.
type pending struct {
	Block
	sum    string // hex SHA-256 from the begin line
	lines  int    // data lines the begin line announced
	got    int    // data lines read
	packed []byte
	// beginLine is the log's line that began the block.
	beginLine int
}

func (p *pending) begin(fields []string) error {
	for _, kv := range fields {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "sha256":
			p.sum = v
		case "lines":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("begin line: lines=%q: want a whole number ≥ 1", v)
			}
			p.lines = n
		}
	}
	if len(p.sum) != 2*sha256.Size || p.lines == 0 {
		return errors.New("begin line: want sha256=HEX and lines=N")
	}
	return nil
}

func (p *pending) add(fields []string) error {
	n, err := strconv.Atoi(fields[0])
	if err != nil || len(fields) != 2 {
		return fmt.Errorf("want a data line \"N BASE64\", got %q", strings.Join(fields, " "))
	}
	if n != p.got+1 {
		return fmt.Errorf("data line %d where line %d was due: the log lost or repeated lines", n, p.got+1)
	}
	if n > p.lines {
		return fmt.Errorf("data line %d of a block of %d lines", n, p.lines)
	}
	chunk, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return fmt.Errorf("data line %d: not base64: %v", n, err)
	}
	p.packed = append(p.packed, chunk...)
	p.got = n
	return nil
}

func (p *pending) end(maxDoc int64, budget *capped.Budget) error {
	if p.got != p.lines {
		return fmt.Errorf("the block is cut short: %s", p.progress())
	}
	limit := maxDoc
	if budget != nil && budget.Left() < limit {
		limit = budget.Left()
	}
	doc, err := packed.Unpack(p.packed, p.sum, limit)
	p.packed = nil
	if errors.Is(err, packed.ErrTooLarge) && limit < maxDoc {
		return budget.Exceeded()
	}
	if err != nil {
		return err
	}
	if budget != nil {
		if err := budget.Take(int64(len(doc))); err != nil {
			return err
		}
	}
	p.Doc = doc
	return nil
}

// progress says how much of the block was read.
func (p *pending) progress() string {
	return fmt.Sprintf("%d of its %d data lines", p.got, p.lines)
}
