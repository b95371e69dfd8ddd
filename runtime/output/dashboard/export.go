package dashboard

import (
	"fmt"

	"github.com/llmrun/llmrun/runtime/output"
)

// checkExport says, before the run starts, that the report cannot be
// written where cfg.Export says, or would replace the recording.
func checkExport(cfg Config) error {
	if err := output.CheckPath(cfg.Export); err != nil {
		return fmt.Errorf("dashboard export %s: cannot write there: %w", cfg.Export, err)
	}
	if cfg.Record != "" && output.SamePaths([]output.FileFlag{{Flag: "--dashboard-record", Path: cfg.Record}, {Flag: "--dashboard-export", Path: cfg.Export}}) != nil {
		return fmt.Errorf("dashboard export %s: that is the recording's file too (--dashboard-record); name another", cfg.Export)
	}
	return nil
}

// Note adds a sentence to the exported report, shown above its figures:
// why it shows less than a whole run (interrupted, the script failed).
// Without an export it does nothing.
func (d *Dashboard) Note(sentence string) {
	if d.report != nil {
		d.report.Note(sentence)
	}
}

// writeExport writes the run's report, keeping why it failed, if it
// did, for ExportWarning.
func (d *Dashboard) writeExport() {
	if d.report == nil {
		return
	}
	if err := output.WriteFile(d.cfg.Export, d.report.WriteHTML); err != nil {
		d.exportWarning = fmt.Sprintf("dashboard export %s: the report was not written: %v", d.cfg.Export, err)
	}
	d.report = nil
}

// ExportWarning says, once stopped, why the run's report was not
// written; empty when it was, or none was asked for.
func (d *Dashboard) ExportWarning() string { return d.exportWarning }

// Open opens the page in the user's browser when the configuration asks
// for it and the page is served; warn is told of a failure, which does
// not stop the run.
func (d *Dashboard) Open(warn func(string)) {
	if !d.cfg.Open || d.URL() == "" {
		return
	}
	if err := OpenBrowser(d.URL(), d.cfg.Browser, func(err error) { warn("--dashboard-open: " + err.Error()) }); err != nil {
		warn("--dashboard-open: " + err.Error())
	}
}
