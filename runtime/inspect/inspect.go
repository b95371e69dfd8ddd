// Package inspect describes the load shape of a loaded script, as llmrun
// inspect prints it: its scenarios resolved (executor, start, VUs,
// longest duration) and, for the whole test, the VUs it may use and how
// long it may last.
package inspect

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Inspection is what llmrun inspect prints: the resolved load shape.
type Inspection struct {
	Script       string     `json:"script"`
	ScriptSHA256 string     `json:"script_sha256"`
	Scenarios    []Scenario `json:"scenarios"`
	// MaxVUs is the sum of the scenarios' VUs: the VUs the run
	// initialises, and at most that many run at once.
	MaxVUs int `json:"max_vus"`
	// MaxDuration is the latest a scenario can end: the largest start
	// time plus maximum duration (graceful stop included).
	MaxDuration  string  `json:"max_duration"`
	MaxDurationS float64 `json:"max_duration_s"`
	// HandleSummary is true when the script exports handleSummary.
	HandleSummary bool `json:"handle_summary"`
	// ExecutionSegment is --execution-segment's part, "1/3:2/3 of
	// 0,1/3,2/3,1": the scenarios are that part of the plan.
	ExecutionSegment string `json:"execution_segment,omitempty"`
	// Instance is --instance's index of --instances (Instances): the
	// scenarios are that instance's share of the plan.
	Instance  *int `json:"instance,omitempty"`
	Instances int  `json:"instances,omitempty"`
	// Search, when the script asks for a capacity search, is what it is
	// set to do: the scenarios' rates or VUs are then its mix, and its
	// levels, not the scenarios' durations, say how long it runs.
	Search *capacity.SearchPlan `json:"search,omitempty"`
}

// Scenario is one resolved scenario; the string durations are Go
// durations ("1m30s"), as in the summary's load_shape, and the _s fields
// the same in seconds.
type Scenario struct {
	Name       string  `json:"name"`
	Executor   string  `json:"executor"`
	Exec       string  `json:"exec"`
	StartTime  string  `json:"start_time"`
	StartTimeS float64 `json:"start_time_s"`
	// StartAfter names the scenario this one starts after (startAfter),
	// StartTime being then a delay after its end.
	StartAfter   string            `json:"start_after,omitempty"`
	MaxVUs       int               `json:"max_vus"`
	MaxDuration  string            `json:"max_duration"`
	MaxDurationS float64           `json:"max_duration_s"`
	Description  string            `json:"description"`
	Tags         map[string]string `json:"tags,omitempty"`
}

// Of describes a loaded engine's scenarios; script names it.
func Of(script string, e *engine.Engine) *Inspection {
	in := &Inspection{Script: script, ScriptSHA256: e.ScriptSHA256(), MaxVUs: e.MaxVUs(), HandleSummary: e.HasHandleSummary()}
	for _, sc := range e.Scenarios() {
		d := sc.Config.MaxDuration()
		in.Scenarios = append(in.Scenarios, Scenario{
			Name: sc.Name, Executor: sc.Executor, Exec: sc.Exec,
			StartTime: sc.StartTime.String(), StartTimeS: sc.StartTime.Seconds(), StartAfter: sc.StartAfter,
			MaxVUs:      sc.Config.MaxVUs(),
			MaxDuration: d.String(), MaxDurationS: d.Seconds(),
			Description: sc.Describe(), Tags: sc.Tags,
		})
	}
	end := e.MaxDuration()
	in.MaxDuration, in.MaxDurationS = end.String(), end.Seconds()
	return in
}

// Render prints the inspection as a heading and a table.
func (in *Inspection) Render(w io.Writer) error {
	length := fmt.Sprintf("at most %s (graceful stops included)", in.MaxDuration)
	if in.Search != nil {
		length = fmt.Sprintf("levels of a capacity search for at most %s in all", in.Search.Budget)
	}
	if _, err := fmt.Fprintf(w, "script: %s\n%s, up to %s, %s\n",
		in.Script, textfmt.Count(len(in.Scenarios), "scenario"), textfmt.Count(in.MaxVUs, "VU"), length); err != nil {
		return err
	}
	if in.Search != nil {
		for _, line := range in.Search.Lines() {
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
		}
	}
	switch {
	case in.Instance != nil && in.ExecutionSegment != "":
		if _, err := fmt.Fprintf(w, "instance %d of %d, execution segment %s: the VUs, iterations and arrivals below are this instance's share\n", *in.Instance, in.Instances, in.ExecutionSegment); err != nil {
			return err
		}
	case in.Instance != nil:
		if _, err := fmt.Fprintf(w, "instance %d of %d: the whole plan, as the only instance\n", *in.Instance, in.Instances); err != nil {
			return err
		}
	case in.ExecutionSegment != "":
		if _, err := fmt.Fprintf(w, "execution segment %s: the VUs, iterations and arrivals below are this process's share\n", in.ExecutionSegment); err != nil {
			return err
		}
	}
	if in.HandleSummary {
		if _, err := fmt.Fprintln(w, "handleSummary(): exported; it replaces the default end-of-run summary"); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	header := []any{"scenario", "executor", "exec", "start", "VUs", "max duration", "description"}
	align := []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}))
	t.Header(header...)
	for _, sc := range in.Scenarios {
		start := sc.StartTime
		if sc.StartAfter != "" {
			start = "after " + sc.StartAfter
			if sc.StartTimeS > 0 {
				start += " +" + sc.StartTime
			}
		}
		if err := t.Append(sc.Name, sc.Executor, sc.Exec+"()", start, fmt.Sprint(sc.MaxVUs), sc.MaxDuration, sc.Description); err != nil {
			return err
		}
	}
	return t.Render()
}
