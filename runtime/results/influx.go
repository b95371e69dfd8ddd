package results

import (
	"context"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/summary"
)

// readStored reads the results the processes of run runID stored on
// the server of cfg, as llmrun merge --influxdb and trend take them: each
// parsed as it is unpacked (never held unpacked), within budget, and
// named by its instance in errors ("the result of instance 2 of run ID
// in InfluxDB"). A run with no stored result is an error.
func readStored(ctx context.Context, cfg influxdb.Config, runID string, budget *capped.Budget) ([]*summary.Summary, []string, error) {
	var (
		results []*summary.Summary
		names   []string
	)
	name := func(r influxdb.StoredResult) string { return "the result of " + r.Name(runID) + " in InfluxDB" }
	parse := func(r influxdb.StoredResult, doc io.Reader) (*summary.Summary, error) {
		return summary.ParseStream(name(r), doc, r.Unpack)
	}
	_, err := influxdb.ReadResults(ctx, cfg, runID, budget, parse, func(r influxdb.StoredResult, s *summary.Summary) error {
		results, names = append(results, s), append(names, name(r))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(results) == 0 {
		return nil, nil, fmt.Errorf("no result of run %s in InfluxDB at %s (llm_result points): check the run id (meta.run_id) and the bucket; runs stored by an llmrun before 'merge --influxdb' have none", runID, cfg)
	}
	return results, names, nil
}
