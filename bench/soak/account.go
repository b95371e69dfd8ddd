package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/summary"
)

// outcome is what the run left to account for.
type outcome struct {
	sum   *summary.Summary
	stats llmsim.Stats
	// lines is the JSONL file's line count.
	lines int64
}

// check is one line of the accounting: a figure and what it must be.
type check struct {
	what      string
	got, want string
	ok        bool
}

// within reports a check that got lies in [want-slack, want]: requests
// the end of the run interrupted may be missing from one side.
func within(what string, got, want, slack int64) check {
	w := fmt.Sprint(want)
	if slack > 0 {
		w = fmt.Sprintf("%d to %d", want-slack, want)
	}
	return check{what, fmt.Sprint(got), w, got <= want && got >= want-slack}
}

// equal reports a check that got is want.
func equal(what string, got, want int64) check { return within(what, got, want, 0) }

// atMost reports a check that got is at most limit.
func atMost(what string, got, limit int64) check {
	return check{what, fmt.Sprint(got), fmt.Sprintf("at most %d", limit), got <= limit}
}

// accountChecks are the checks that every request is accounted for: the
// summary agrees with itself, with the JSONL file and with the simulator,
// and each error class has as many requests as the simulator injected
// faults of that class.
func accountChecks(o outcome) []check {
	sv := o.sum.Serving
	interrupted := sv.Interrupted
	retries := sumCounts(o.sum.Retries)
	checks := []check{
		equal("llmrun: completed + failed = requests", sv.OK+sv.Failed, sv.Requests),
		equal("llmrun: errors by class add up to failed", sumCounts(o.sum.Errors), sv.Failed),
		equal("JSONL lines = requests (completed + failed)", o.lines, sv.Requests),
		jsonlReport(o.sum.Outputs, o.lines),
		equal("script errors", scriptErrors(o.sum), 0),
		within("simulator: requests received (see below) vs llmrun's requests + interrupted + retried attempts",
			simReceived(o.stats), sv.Requests+interrupted+retries, interrupted),
		atMost("llmrun: completed, against the sequences the simulator completed", sv.OK, int64(o.stats.Completed)),
		atMost("llmrun: output tokens of completed requests, against the tokens the simulator generated", sv.OutputTokens, int64(o.stats.Tokens)),
	}
	return append(checks, classChecks(o, interrupted)...)
}

// simReceived is every generation request the simulator accepted: those
// its engine queued, those a fault answered before the engine, and those
// it rejected with 400.
func simReceived(st llmsim.Stats) int64 {
	n := st.Received + st.Rejected
	for _, f := range beforeEngine {
		n += st.Faults[f]
	}
	return int64(n)
}

// jsonlReport checks the JSONL output's own report: every line written,
// none dropped.
func jsonlReport(reports []summary.OutputReport, lines int64) check {
	for _, r := range reports {
		if strings.HasPrefix(r.Output, "jsonl") {
			return check{"JSONL output: written, dropped (its report in the summary)",
				fmt.Sprintf("%d, %d", r.Written, r.Dropped), fmt.Sprintf("%d, 0", lines),
				r.Written == lines && r.Dropped == 0 && r.Err == ""}
		}
	}
	return check{"JSONL output: written, dropped (its report in the summary)", "no report", "a report", false}
}

// classChecks compares each error class's count with the faults the
// simulator injected that end in it; a class no fault explains must be
// empty.
func classChecks(o outcome, slack int64) []check {
	got := map[string]int64{}
	for _, e := range o.sum.Errors {
		got[e.Class] = e.Count
	}
	want, from := expectedClasses(o.stats.Faults)
	// A sound answer whose client gave up is a timeout no fault made: the
	// simulator was too slow for the request timeout on a loaded machine.
	if n := o.stats.GivenUp; n > 0 {
		timeout := faultClass["stall"]
		want[timeout] += int64(n)
		if from[timeout] != "" {
			from[timeout] += " + "
		}
		from[timeout] += fmt.Sprintf("sound answers given up on %d", n)
	}
	var classes []string
	for c := range got {
		classes = append(classes, c)
	}
	for c := range want {
		if !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
	}
	slices.Sort(classes)
	var checks []check
	for _, c := range classes {
		why := from[c]
		if why == "" {
			why = "no fault"
		}
		checks = append(checks, within(fmt.Sprintf("error class %s (%s)", c, why), got[c], want[c], slack))
	}
	return checks
}

// expectedClasses maps the simulator's fault counts to error classes: the
// count each class should have, and which faults make it up.
func expectedClasses(faults map[string]uint64) (map[string]int64, map[string]string) {
	want, from := map[string]int64{}, map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(faults)) {
		class, known := faultClass[name]
		if !known {
			class = "unknown fault " + name
		}
		if class == "" {
			continue
		}
		want[class] += int64(faults[name])
		if from[class] != "" {
			from[class] += " + "
		}
		from[class] += fmt.Sprintf("%s %d", name, faults[name])
	}
	return want, from
}

// printChecks prints the checks as a table and reports whether all
// passed.
func printChecks(out io.Writer, checks []check) bool {
	all := true
	width := 0
	for _, c := range checks {
		width = max(width, len(c.what))
	}
	for _, c := range checks {
		mark := "ok"
		if !c.ok {
			mark, all = "MISMATCH", false
		}
		fmt.Fprintf(out, "  %-*s %12s   want %-14s %s\n", width, c.what, c.got, c.want, mark)
	}
	return all
}

// printSimStats prints what the simulator counted.
func printSimStats(out io.Writer, st llmsim.Stats) {
	fmt.Fprintf(out, "simulator: %d queued in its engine (%d completed, %d canceled by their client), %d requests whose client left a sound answer before it was delivered, %d rejected with 400; faults injected:",
		st.Received, st.Completed, st.Canceled, st.GivenUp, st.Rejected)
	for _, name := range slices.Sorted(maps.Keys(st.Faults)) {
		fmt.Fprintf(out, " %s %d", name, st.Faults[name])
	}
	fmt.Fprintln(out)
}

// scriptErrors counts the exceptions the iterations threw.
func scriptErrors(s *summary.Summary) int64 {
	n := s.OtherScriptErrors
	for _, e := range s.ScriptErrors {
		n += e.Count
	}
	return n
}

// sumCounts adds up the counts of error classes.
func sumCounts(cs []summary.ErrorClassCount) int64 {
	var n int64
	for _, c := range cs {
		n += c.Count
	}
	return n
}
