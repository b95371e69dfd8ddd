package summarytest

import (
	"time"

	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// ClientRun is a run whose client counted 100 completed requests of 50
// output tokens each, none failed, with one VU.
func ClientRun() *summary.Summary {
	return &summary.Summary{SchemaVersion: summary.SchemaVersion,
		Meta:    summary.Meta{RunID: "r", ScriptSHA256: "abc", Start: T0, End: T0.Add(10 * time.Second), LoadShape: []summary.ScenarioShape{{Name: "default", MaxVUs: 1, PeakVUs: 1}}},
		Serving: summary.Serving{Requests: 100, OK: 100, OutputTokens: 5000, MeanOutputTokens: 50}}
}

// Attached is ClientRun with the server section of a vLLM and a DCGM
// target attached, after edit (when not nil) changed the run or the targets.
func Attached(edit func(s *summary.Summary, targets []summary.ServerTarget)) *summary.Summary {
	s := ClientRun()
	targets := []summary.ServerTarget{VLLMTarget(100, 5000), DCGMTarget()}
	if edit != nil {
		edit(s, targets)
	}
	summarize.AttachServer(s, targets)
	return s
}
