package results

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Set is the results of one merge, each with what names it in errors:
// its file, its log's block, or its instance in InfluxDB.
type Set struct {
	Results []*summary.Summary
	Names   []string
}

// maxUnpacked bounds the result files one merge unpacks from logs or
// InfluxDB, all together: 4 of the largest (summary.MaxResultFileSize),
// thousands of real ones.
var maxUnpacked int64 = 1 << 30

// newBudget is the budget of the result files one merge unpacks.
func newBudget() *capped.Budget {
	return capped.NewBudget(maxUnpacked, "the result files one merge unpacks")
}

// Source is where the results of one merge are: Inputs, each a result
// file or a log holding result blocks (as "llmrun run --out json=-"
// prints them), "-" for Stdin; or, when RunID is set, the results the
// instances of run RunID stored in InfluxDB (their llm_result points).
type Source struct {
	Inputs []string
	Stdin  io.Reader
	Influx influxdb.Config
	RunID  string
}

// Read reads the results of the source, unpacking at most maxUnpacked
// bytes of result files from logs or InfluxDB.
func (src Source) Read(ctx context.Context) (Set, error) {
	var s Set
	var err error
	if src.RunID != "" {
		s.Results, s.Names, err = readStored(ctx, src.Influx, src.RunID, newBudget())
	} else {
		s.Results, s.Names, err = readInputs(src.Inputs, src.Stdin, newBudget())
	}
	return s, err
}

// Merge merges the results into the result of the whole test, whose sweep
// is judged again on the merged scenarios as run judges one. An error
// names the results by their names, not their positions.
func (s Set) Merge() (*summary.Summary, error) {
	merged, err := summary.Merge(s.Results...)
	if err != nil {
		return nil, errors.New(mergeError(err, s.Names))
	}
	merged.Capacity = capacity.Assess(merged, capacity.CriteriaOf(s.Results[0]))
	return merged, nil
}

// mergeError says what Merge found wrong, naming the results (files)
// rather than their positions.
func mergeError(err error, files []string) string {
	var hm *summary.HashMismatchError
	var ie *summary.InputError
	switch {
	case errors.As(err, &hm):
		return fmt.Sprintf("%s ran a script of sha256 %s, %s one of sha256 %s: only results of the same script merge",
			files[hm.Index], hm.Hash, files[0], hm.FirstHash)
	case errors.As(err, &ie):
		return fmt.Sprintf("%s: %v", files[ie.Index], ie.Err)
	}
	return err.Error()
}

// InstanceList names instance indices: "instance 2", "instances 0, 3".
func InstanceList(indices []int) string {
	parts := make([]string, len(indices))
	for i, n := range indices {
		parts[i] = strconv.Itoa(n)
	}
	if len(parts) == 1 {
		return "instance " + parts[0]
	}
	return "instances " + strings.Join(parts, ", ")
}
