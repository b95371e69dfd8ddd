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
	// packed is the result file gzipped, sum its hex SHA-256 from the
	// begin line, limit the most bytes it may unpack to once the block
	// has ended.
	packed []byte
	sum    string
	limit  int64
}

// Unpack returns the block's result file whole, checked against its
// SHA-256: for a parse that needs all of it at once, such as to say
// where a file that is not a result file goes wrong. It is valid only
// during Read's parse.
func (b Block) Unpack() ([]byte, error) {
	return packed.Unpack(b.packed, b.sum, b.limit)
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

// Read finds every block in log and, as soon as its end line is read,
// hands its result file to parse as a stream, then checks the file and
// hands what parse made of it to found, in the order the blocks end: a
// log of many blocks never holds even one result file unpacked, only what
// parse makes of each. maxDoc bounds each result file once unpacked,
// budget all of them together (nil: no bound beyond maxDoc); the budget
// bounds a block before it is unpacked. A block cut short (no begin or
// end line, a line missing), a line that does not decode, or a file whose
// SHA-256 is not the begin line's is an error naming the block's run and
// instance and the line, whatever parse made of it; then an error of
// parse is Read's as it is. Lines without Marker are skipped, as is the
// log's rest after an error of parse or found. Read returns how many
// blocks it found.
func Read[T any](log io.Reader, maxDoc int64, budget *capped.Budget, parse func(Block, io.Reader) (T, error), found func(Block, T) error) (int, error) {
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
			v, parseErr, err := end(p, maxDoc, budget, parse)
			if err != nil {
				return blocks, fmt.Errorf("%s (begun at line %d): %w", b.Name(), p.beginLine, err)
			}
			blocks++
			if parseErr != nil {
				return blocks, parseErr
			}
			if err := found(p.Block, v); err != nil {
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
	lines int // data lines the begin line announced
	got   int // data lines read
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

// end checks that the block p has all its lines, then parses its result
// file as it is unpacked and checks it: an error of the block (err) comes
// before parse's error (parseErr), and with either v is not to be used.
func end[T any](p *pending, maxDoc int64, budget *capped.Budget, parse func(Block, io.Reader) (T, error)) (v T, parseErr, err error) {
	if p.got != p.lines {
		return v, nil, fmt.Errorf("the block is cut short: %s", p.progress())
	}
	p.limit = maxDoc
	if budget != nil && budget.Left() < p.limit {
		p.limit = budget.Left()
	}
	size, err := packed.Decode(bytes.NewReader(p.packed), p.sum, p.limit, func(doc io.Reader) {
		v, parseErr = parse(p.Block, doc)
	})
	p.packed = nil
	if errors.Is(err, packed.ErrTooLarge) && p.limit < maxDoc {
		return v, nil, budget.Exceeded()
	}
	if err != nil {
		return v, nil, err
	}
	if budget != nil {
		if err := budget.Take(size); err != nil {
			return v, nil, err
		}
	}
	return v, parseErr, nil
}

// progress says how much of the block was read.
func (p *pending) progress() string {
	return fmt.Sprintf("%d of its %d data lines", p.got, p.lines)
}
