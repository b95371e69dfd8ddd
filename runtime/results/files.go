package results

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/runtime/output/logblock"
	"github.com/llmrun/llmrun/runtime/summary"
)

// stdinName is the input "-": standard input.
const stdinName = "-"

// MaxLogSize bounds a log readInputs reads: the logs of many pods, each
// with its result block and its live view's lines.
const MaxLogSize = 1 << 30

// readInputs reads the inputs of llmrun merge, each a result file or a
// log holding result blocks, from its file name or, for "-", from stdin,
// the blocks unpacked within budget. It returns the results and what
// names each in errors: the file, or the log and the block.
func readInputs(inputs []string, stdin io.Reader, budget *capped.Budget) ([]*summary.Summary, []string, error) {
	var (
		results []*summary.Summary
		labels  []string
	)
	for _, in := range inputs {
		rs, ls, err := readInput(in, stdin, budget)
		if err != nil {
			return nil, nil, err
		}
		results, labels = append(results, rs...), append(labels, ls...)
	}
	return results, labels, nil
}

// readInput reads one input of merge. A log is read as a stream, each
// block parsed as it is unpacked once its end line is read; what holds no
// block is a result file.
func readInput(name string, stdin io.Reader, budget *capped.Budget) ([]*summary.Summary, []string, error) {
	var (
		in   io.Reader
		size int64 // the input's size, 0 when not known
	)
	if name == stdinName {
		name = "standard input"
		in = capped.NewReader(stdin, name, MaxLogSize)
	} else if info, err := os.Stat(name); err == nil && (info.Mode().IsRegular() || info.Mode()&fs.ModeNamedPipe != 0) {
		// A file, or a pipe such as <(kubectl logs ...); what is neither is
		// left to summary.ReadJSON, which names what it is.
		f, err := capped.Open(name, MaxLogSize)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot read %s: %w", name, err)
		}
		defer f.Close()
		in, size = f, info.Size()
	} else {
		s, err := summary.ReadJSON(name)
		if err != nil {
			return nil, nil, err
		}
		return []*summary.Summary{s}, []string{name}, nil
	}
	// Until a block is found the input may be a result file: its start is
	// kept, up to the bound of a result file.
	head := newHeadKeeper(in, size, summary.MaxResultFileSize)
	var (
		results  []*summary.Summary
		labels   []string
		parseErr error
	)
	label := func(b logblock.Block) string { return fmt.Sprintf("%s (%s)", name, b.Name()) }
	parse := func(b logblock.Block, doc io.Reader) (*summary.Summary, error) {
		head.drop()
		s, err := summary.ParseStream(label(b), doc, b.Unpack)
		parseErr = err
		return s, err
	}
	n, err := logblock.Read(head, summary.MaxResultFileSize, budget, parse, func(b logblock.Block, s *summary.Summary) error {
		results, labels = append(results, s), append(labels, label(b))
		return nil
	})
	switch {
	case err != nil && err == parseErr: // it names the block
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	case n > 0:
		return results, labels, nil
	case head.overflow:
		// Not a log: a result file is held to its own bound.
		return nil, nil, fmt.Errorf("%s: more than the %s a result file may hold, and no result block of a log in it", name, capped.Size(summary.MaxResultFileSize))
	}
	s, err := summary.Parse(name, head.buf)
	if err != nil {
		return nil, nil, err
	}
	return []*summary.Summary{s}, []string{name}, nil
}

// headKeeper reads r and keeps what it read, up to max bytes, while it
// may be a result file: a JSON object, up to the first block found. It is
// the start of an input that is a result file rather than a log, kept
// without holding a log that is not one.
type headKeeper struct {
	r        io.Reader
	max      int64
	size     int64 // the input's size, 0 when not known
	buf      []byte
	object   bool // the input starts as a JSON object
	overflow bool // more than max bytes were read while keeping
	dropped  bool
}

// newHeadKeeper keeps the start of r, of size bytes when known (else 0),
// up to max.
func newHeadKeeper(r io.Reader, size, max int64) *headKeeper {
	return &headKeeper{r: r, max: max, size: size}
}

// notJSONKept is how much headKeeper keeps of an input that is not JSON:
// enough for the error that says so.
const notJSONKept = 1 << 10

func (h *headKeeper) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if h.dropped || h.overflow {
		return n, err
	}
	h.buf = append(h.buf, p[:n]...)
	if !h.object {
		if start := bytes.TrimLeft(p[:n], " \t\r\n"); len(start) > 0 {
			if start[0] != '{' {
				// Not a result file: a log, or what Parse says is not JSON.
				h.buf, h.dropped = bytes.Clone(h.buf[:min(len(h.buf), notJSONKept)]), true
				return n, err
			}
			h.object = true
			// A result file: one buffer of its size, not one grown.
			h.buf = append(make([]byte, 0, min(h.size, h.max)+1), h.buf...)
		}
	}
	if int64(len(h.buf)) > h.max {
		h.buf, h.overflow = nil, true
	}
	return n, err
}

// drop stops keeping: the input is a log.
func (h *headKeeper) drop() { h.buf, h.dropped = nil, true }
