package influxdb

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/internal/capped"
)

// StoredResult is the result document one process of a run stored as
// llm_result points.
type StoredResult struct {
	// Instance is the process's instance tag; "" for a run without
	// instances.
	Instance string
	parts    *storedParts
}

// Unpack returns the result file's JSON whole, byte for byte, checked:
// for a parse that needs all of it at once, such as to say where a file
// that is not a result file goes wrong.
func (r StoredResult) Unpack() ([]byte, error) {
	chunks, err := r.parts.all()
	if err != nil {
		return nil, err
	}
	return decodeResult(chunks, r.parts.size, r.parts.sum)
}

// Name is how messages name the stored result: "instance 2 of run ID",
// or "run ID".
func (r StoredResult) Name(runID string) string {
	return resultName(runID, r.Instance)
}

// resultName names the stored result of an instance ("" for none) of a
// run.
func resultName(runID, instance string) string {
	if instance == "" {
		return "run " + runID
	}
	return "instance " + instance + " of run " + runID
}

// ResultsQuery returns the InfluxQL statement ReadResults runs: every
// llm_result point of the run.
func ResultsQuery(runID string) string {
	return fmt.Sprintf("SELECT * FROM %s WHERE %s = %s", influxQLIdent(mResult), influxQLIdent("run_id"), influxQLString(runID))
}

// ReadResults reads the result documents the processes of run runID
// stored as llm_result points on the server of cfg (one InfluxQL query
// over /query) and, ordered by instance, hands each to parse as a stream,
// decoded as parse reads it, then checks it and hands what parse made of
// it to found: the results are never held unpacked, only what parse
// makes of each. The size each result declares is checked against budget
// (nil: none beyond summary.MaxResultFileSize) before it is unpacked. A
// result whose chunks are not all there, disagree or fail their checksum
// is an error that names its instance, whatever parse made of it; then
// an error of parse is ReadResults' as it is. A run with no llm_result
// point gives none and no error. ReadResults returns how many results it
// handed to parse.
func ReadResults[T any](ctx context.Context, cfg Config, runID string, budget *capped.Budget, parse func(StoredResult, io.Reader) (T, error), found func(StoredResult, T) error) (int, error) {
	if runID == "" {
		return 0, errors.New("influxdb: no run id")
	}
	answer, err := influxQL(ctx, cfg, ResultsQuery(runID))
	if errors.Is(err, errAnswerTooLarge) {
		return 0, fmt.Errorf("%w (the run's stored results: merge the instances' result files, or their logs, instead)", err)
	}
	if err != nil {
		return 0, err
	}
	parts := map[string]*storedParts{}
	for _, s := range answer {
		for _, row := range s.Values {
			c, err := resultChunk(s.Columns, row)
			if err == nil {
				p := parts[c.instance]
				if p == nil {
					p = &storedParts{chunks: map[int]string{}}
					parts[c.instance] = p
				}
				err = p.add(c)
			}
			if err != nil {
				return 0, fmt.Errorf("influxdb %s: the llm_result points of %s: %w", cfg.URL, resultName(runID, c.instance), err)
			}
		}
	}
	instances := slices.SortedFunc(maps.Keys(parts), compareInstances)
	for i, inst := range instances {
		p := parts[inst]
		if budget != nil {
			if err := budget.Take(p.size); err != nil {
				return i, fmt.Errorf("influxdb %s: the result %s stored, of %d bytes: %w", cfg.URL, resultName(runID, inst), p.size, err)
			}
		}
		r := StoredResult{Instance: inst, parts: p}
		var (
			v        T
			parseErr error
		)
		chunks, err := p.all()
		if err == nil {
			err = streamResult(chunks, p.size, p.sum, func(doc io.Reader) { v, parseErr = parse(r, doc) })
		}
		if err != nil {
			return i, fmt.Errorf("influxdb %s: the result %s stored is incomplete or damaged: %w", cfg.URL, resultName(runID, inst), err)
		}
		delete(parts, inst)
		if parseErr != nil {
			return i + 1, parseErr
		}
		if err := found(r, v); err != nil {
			return i + 1, err
		}
	}
	return len(instances), nil
}

// compareInstances orders instance tags by their number, then as text.
func compareInstances(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// maxResultChunks bounds the chunks of one stored result: those of the
// largest result file llmrun reads, with room to spare.
const maxResultChunks = 1 << 16

// maxMissingNamed is how many missing chunks an error names.
const maxMissingNamed = 10

// storedChunk is one llm_result point.
type storedChunk struct {
	instance    string
	index       int
	data, sum   string
	count, size int64
}

// resultChunk reads an llm_result point from a row of SELECT *.
func resultChunk(columns []string, values []any) (storedChunk, error) {
	var c storedChunk
	if len(values) != len(columns) {
		return c, fmt.Errorf("a row of %d values for %d columns", len(values), len(columns))
	}
	var chunk string
	var haveCount, haveSize bool
	for i, col := range columns {
		switch v := values[i].(type) {
		case string:
			switch col {
			case "instance":
				c.instance = v
			case "chunk":
				chunk = v
			case "data":
				c.data = v
			case "sha256":
				c.sum = v
			}
		case json.Number:
			n, err := v.Int64()
			switch col {
			case "chunks":
				c.count, haveCount = n, err == nil
			case "bytes":
				c.size, haveSize = n, err == nil
			}
		}
	}
	n, err := strconv.Atoi(chunk)
	switch {
	case err != nil || n < 0:
		return c, fmt.Errorf("a point whose chunk tag is %q, not an index", chunk)
	case !haveCount || !haveSize || c.sum == "":
		return c, fmt.Errorf("chunk %d lacks its chunks, bytes or sha256 field", n)
	case c.count < 1 || c.count > maxResultChunks || int64(n) >= c.count:
		return c, fmt.Errorf("chunk %d of %d: want an index below a count of 1 to %d", n, c.count, maxResultChunks)
	}
	c.index = n
	return c, nil
}

// storedParts are the chunks of one stored result read so far.
type storedParts struct {
	chunks      map[int]string
	sum         string
	count, size int64
}

// add takes a chunk, which must agree with the others on the result's
// chunk count, size and checksum.
func (p *storedParts) add(c storedChunk) error {
	if len(p.chunks) == 0 {
		p.sum, p.count, p.size = c.sum, c.count, c.size
	} else if c.sum != p.sum || c.count != p.count || c.size != p.size {
		return fmt.Errorf("chunk %d is of another result (%d chunks, %d bytes, sha256 %s) than the others (%d chunks, %d bytes, sha256 %s)",
			c.index, c.count, c.size, c.sum, p.count, p.size, p.sum)
	}
	p.chunks[c.index] = c.data
	return nil
}

// all returns the chunks in order, all there.
func (p *storedParts) all() ([]string, error) {
	var missing []string
	chunks := make([]string, p.count)
	for i := range chunks {
		c, ok := p.chunks[i]
		if !ok && len(missing) < maxMissingNamed {
			missing = append(missing, strconv.Itoa(i))
		}
		chunks[i] = c
	}
	if lost := int(p.count) - len(p.chunks); lost > 0 {
		if lost > len(missing) {
			missing = append(missing, "…")
		}
		return nil, fmt.Errorf("%d of its %d chunks are missing (chunk %s)", lost, p.count, strings.Join(missing, ", "))
	}
	return chunks, nil
}
