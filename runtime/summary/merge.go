package summary

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/internal/errorkey"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/threshold"
)

const (
	// maxMessagesPerClass is how many distinct messages a merged error
	// class keeps, as a run keeps them: the first ones seen.
	maxMessagesPerClass = 3
	// maxScriptErrors is how many distinct script error messages a merged
	// result keeps, as a run does; the others count in OtherScriptErrors.
	maxScriptErrors = 50
)

// MaxMergeInputs is the most results Merge takes: with every count at most
// MaxCount, their sums cannot overflow.
const MaxMergeInputs = 4096

// InputError is Merge's error about one of its results.
type InputError struct {
	// Index is the result's position among Merge's arguments, from 0.
	Index int
	Err   error
}

func (e *InputError) Error() string { return fmt.Sprintf("result %d: %v", e.Index+1, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

// HashMismatchError is Merge's error for results of different scripts:
// they are not parts of one test.
type HashMismatchError struct {
	// Index is the position of the result whose script differs from the
	// first result's, from 0.
	Index int
	// Hash is its script's SHA-256, FirstHash the first result's.
	Hash, FirstHash string
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("result %d ran a script of sha256 %s, result 1 one of sha256 %s: only results of the same script merge",
		e.Index+1, e.Hash, e.FirstHash)
}

// Merge combines the results of several processes that ran one test (the
// same script, on several machines, or one after another) into the result
// of the whole, as if one process had sent every request:
//
//   - The window is the earliest start to the latest end; throughputs and
//     counter rates are over it. A scenario's window spans its windows in
//     the results, each placed from its result's start (a scenario starts
//     at the same offset into every result's run, as their script is the
//     same).
//   - Counts and sums add; trends' histograms merge, exactly, so latency
//     rows, percentiles and headlines are those of one combined run. Rate
//     metrics add their passes and fails; gauges keep the smallest
//     minimum, the largest maximum and the value of the result that ended
//     last (the last one given, among those that ended together).
//   - Errors, retries, checks, token and prompt checks, outputs add up by
//     their class or name; error messages are deduplicated, and capped as
//     a run caps them.
//   - Thresholds are evaluated again on the merged metrics; one whose
//     metric no result has keeps its verdict (passed only if it passed in
//     every result, skipped only if skipped in every one).
//   - The client report is the worst one's figures, with every result's
//     warnings; the timeline adds the points that end in the same second
//     since the merged start (best effort: the points' percentiles are the
//     highest of the results', an upper bound). Early stops join; the
//     preflight keeps each target's first probe. The server section keeps
//     one copy of each scrape target, never a sum (see mergeServers),
//     and judges it against the merged figures. A capacity verdict is not merged:
//     Capacity is nil, for the caller to assess the merged scenarios
//     again (runtime/capacity does).
//   - Meta: the models and tags are the union, hosts and other differing
//     strings are joined, the CPUs of different machines add (results of
//     one host name and CPU count are one machine's, counted once; those
//     without a host name add), each scenario's max VUs add, the run is
//     interrupted if any result was, the seed, options and SLO are the
//     first result's, and Merged lists the results (their Merged lists for
//     merged ones).
//
// Results must have a version ReadJSON reads (the merged result has the
// current SchemaVersion), be at most MaxMergeInputs, hold counts of at
// most MaxCount (ReadJSON checks them) and have the same script hash (a *HashMismatchError
// otherwise); a result given twice is an error. Errors about one result
// are *InputError.
func Merge(results ...*Summary) (*Summary, error) {
	if len(results) == 0 {
		return nil, errors.New("no result to merge")
	}
	if len(results) > MaxMergeInputs {
		return nil, fmt.Errorf("%d results: at most %d merge at once (merge them in groups, then merge the groups' results)", len(results), MaxMergeInputs)
	}
	if err := checkInputs(results); err != nil {
		return nil, err
	}
	labels := make([]string, len(results))
	for i, r := range results {
		labels[i] = inputLabel(r, i)
	}
	// Gauges keep the value of the result that ended last: merge in the
	// order of the ends.
	order := make([]int, len(results))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return results[order[a]].Meta.End.Before(results[order[b]].Meta.End) })

	meta := mergeMeta(results, labels)
	dur := meta.End.Sub(meta.Start)
	all := make([]map[string]MetricSummary, len(results))
	for i, r := range results {
		all[i] = r.Metrics
	}
	set, err := mergeMetrics(all, order, "")
	if err != nil {
		return nil, err
	}
	s := &Summary{
		SchemaVersion: SchemaVersion,
		Meta:          meta,
		Serving:       sumServing(results, nil),
		Latency:       LatencyRows(set.stats),
		Errors:        mergeErrorClasses(results, func(s *Summary) []ErrorClassCount { return s.Errors }),
		Retries:       mergeErrorClasses(results, func(s *Summary) []ErrorClassCount { return s.Retries }),
		Checks:        mergeChecks(results),
		Client:        mergeClients(results, labels),
		TokenChecks:   mergeTokenChecks(results),
		PromptCheck:   mergePromptChecks(results),
		UniqueCache:   mergeUniqueCaches(results, meta),
		Thresholds:    mergeThresholds(results, set, dur),
		Outputs:       mergeOutputs(results),
		Timeline:      mergeTimelines(results, meta.Start, func(r *Summary) []TimelinePoint { return r.Timeline }),
		AbortedBy:     joinDistinct(results, "; ", func(s *Summary) string { return s.AbortedBy }),
		EarlyStop:     joinDistinct(results, "; ", func(s *Summary) string { return s.EarlyStop }),
		Preflight:     mergePreflights(results),
		Metrics:       set.summaries(dur),
	}
	s.Serving.Finish(dur, set.stats)
	s.EarlyStopAt = earliestEarlyStop(results)
	s.LowSuccess = LowSuccessWarning(s.Serving, s.Meta.successFloor())
	s.ScriptErrors, s.OtherScriptErrors = mergeScriptErrors(results)
	if s.Scenarios, err = mergeScenarios(results, order, meta.Start); err != nil {
		return nil, err
	}
	s.Server = mergeServers(results, meta.Start)
	s.FinishServer()
	s.rejudgeServerThresholds()
	return s, nil
}

// checkInputs rejects results that do not merge: of another schema, of
// another script, given twice, or whose latency rows have no histogram.
func checkInputs(results []*Summary) error {
	first := results[0]
	for i, r := range results {
		if r == nil {
			return &InputError{i, errors.New("no result")}
		}
		if r.SchemaVersion < OldestSchemaVersion || r.SchemaVersion > SchemaVersion {
			return &InputError{i, fmt.Errorf("schema_version %d, want %d to %d", r.SchemaVersion, OldestSchemaVersion, SchemaVersion)}
		}
		if r.Meta.ScriptSHA256 != first.Meta.ScriptSHA256 {
			return &HashMismatchError{Index: i, Hash: r.Meta.ScriptSHA256, FirstHash: first.Meta.ScriptSHA256}
		}
		for j, prev := range results[:i] {
			if prev == r || r.Meta.RunID != "" && r.Meta.RunID == prev.Meta.RunID && r.Meta.Start.Equal(prev.Meta.Start) &&
				sharesInstance(r, prev) {
				return &InputError{i, fmt.Errorf("the same run as result %d (run_id %q): merging it twice would count it twice", j+1, r.Meta.RunID)}
			}
		}
		if err := checkRows(r.Latency, r.Metrics); err != nil {
			return &InputError{i, err}
		}
		for _, sc := range r.Scenarios {
			if err := checkRows(sc.Latency, sc.Metrics); err != nil {
				return &InputError{i, fmt.Errorf("scenario %s: %w", sc.Name, err)}
			}
		}
	}
	return nil
}

// checkRows makes sure the latency rows can be computed again: each row's
// metric is there with its histogram.
func checkRows(rows []LatencyRow, ms map[string]MetricSummary) error {
	for _, row := range rows {
		if m, ok := ms[row.Metric]; !ok || m.Histogram == nil {
			return fmt.Errorf("the %s latency row has no histogram in the metrics", row.Metric)
		}
	}
	return nil
}

// inputLabel names a result in Merged: its run_id (with its instance, for
// an instance of a distributed run), else its host, else its position.
func inputLabel(s *Summary, i int) string {
	switch {
	case s.Meta.RunID != "" && s.Meta.Tags["instance"] != "":
		return s.Meta.RunID + " instance " + s.Meta.Tags["instance"]
	case s.Meta.RunID != "":
		return s.Meta.RunID
	case s.Meta.Host != "":
		return s.Meta.Host
	}
	return fmt.Sprintf("result %d", i+1)
}

// machine is the machine a result ran on, as its metadata tells it.
type machine struct {
	host string
	cpus int
}

// mergeMeta merges the results' metadata.
func mergeMeta(results []*Summary, labels []string) Meta {
	first := results[0].Meta
	str := func(f func(m *Meta) string) string {
		return joinDistinct(results, ", ", func(s *Summary) string { return f(&s.Meta) })
	}
	m := Meta{
		RunID:        first.RunID,
		TestID:       str(func(m *Meta) string { return m.TestID }),
		Tool:         str(func(m *Meta) string { return m.Tool }),
		Version:      str(func(m *Meta) string { return m.Version }),
		Script:       str(func(m *Meta) string { return m.Script }),
		ScriptSHA256: first.ScriptSHA256,
		Target:       str(func(m *Meta) string { return m.Target }),
		BaseURL:      str(func(m *Meta) string { return m.BaseURL }),
		Seed:         first.Seed,
		Host:         str(func(m *Meta) string { return m.Host }),
		OS:           str(func(m *Meta) string { return m.OS }),
		GoVersion:    str(func(m *Meta) string { return m.GoVersion }),
		Start:        first.Start,
		End:          first.End,
		Options:      first.Options,
		SLO:          first.SLO,
		// The instances of one run share its options, and so their floor.
		MinSuccessRate:    first.MinSuccessRate,
		MetricPercentiles: first.MetricPercentiles,
	}
	m.ExecutionSegment = str(func(m *Meta) string { return m.ExecutionSegment })
	m.ExecutionSegmentSequence = str(func(m *Meta) string { return m.ExecutionSegmentSequence })
	models := map[string]bool{}
	machines := map[machine]bool{}
	shapes := map[string]int{}
	for i, r := range results {
		rm := r.Meta
		if rm.RunID != m.RunID {
			m.RunID = ""
		}
		for k, v := range rm.Tags {
			if _, ok := m.Tags[k]; !ok {
				if m.Tags == nil {
					m.Tags = map[string]string{}
				}
				m.Tags[k] = v
			}
		}
		for _, model := range rm.Models {
			models[model] = true
		}
		// Results of one machine (one host name and CPU count, as the
		// instances of a run on one host) count its CPUs once.
		if at := (machine{rm.Host, rm.CPUs}); rm.Host == "" || !machines[at] {
			machines[at] = true
			m.CPUs += rm.CPUs
		}
		if rm.Start.Before(m.Start) {
			m.Start = rm.Start
		}
		if rm.End.After(m.End) {
			m.End = rm.End
		}
		m.Interrupted = m.Interrupted || rm.Interrupted
		if m.Options == nil {
			m.Options = rm.Options
		}
		// Every process ran its own VUs.
		for _, sh := range rm.LoadShape {
			if j, ok := shapes[sh.Name]; ok {
				m.LoadShape[j].MaxVUs += sh.MaxVUs
				m.LoadShape[j].PeakVUs += sh.PeakVUs
				m.LoadShape[j].InterruptedAt = earliestStop(m.LoadShape[j].InterruptedAt, sh.InterruptedAt)
				continue
			}
			shapes[sh.Name] = len(m.LoadShape)
			m.LoadShape = append(m.LoadShape, sh)
		}
		if len(rm.Merged) > 0 {
			m.Merged = append(m.Merged, rm.Merged...)
		} else {
			m.Merged = append(m.Merged, labels[i])
		}
	}
	m.Models = slices.Sorted(maps.Keys(models))
	mergeInstances(&m, results)
	return m
}

// instanceSeparator joins the instances of a merged result's tag.
const instanceSeparator = ", "

// instancesOf are the instances r holds: its "instance" tag, one index,
// or the indices a merge joined; none when it has no such tag.
func instancesOf(r *Summary) []int {
	var out []int
	for part := range strings.SplitSeq(r.Meta.Tags["instance"], instanceSeparator) {
		if i, err := strconv.Atoi(part); err == nil {
			out = append(out, i)
		}
	}
	return out
}

// sharesInstance reports whether a and b, results of one run, hold an
// instance in common, or are both of no instance: one of them would be
// counted twice. Results merged from instances hold several.
func sharesInstance(a, b *Summary) bool {
	ia, ib := instancesOf(a), instancesOf(b)
	if len(ia) == 0 || len(ib) == 0 {
		return a.Meta.Tags["instance"] == b.Meta.Tags["instance"]
	}
	for _, i := range ia {
		if slices.Contains(ib, i) {
			return true
		}
	}
	return false
}

// mergeInstances sets the instances of a merged distributed run: their
// count, the indices given as the "instance" tag (joined, in order) and,
// when every result is of one run, the indices of the instances whose
// results are missing.
func mergeInstances(m *Meta, results []*Summary) {
	given := map[int]bool{}
	for _, r := range results {
		m.Instances = max(m.Instances, r.Meta.Instances)
		for _, i := range instancesOf(r) {
			given[i] = true
		}
	}
	if len(given) > 1 {
		tags := make([]string, 0, len(given))
		for _, i := range slices.Sorted(maps.Keys(given)) {
			tags = append(tags, strconv.Itoa(i))
		}
		m.Tags["instance"] = strings.Join(tags, instanceSeparator)
	}
	if m.Instances == 0 || m.RunID == "" {
		return
	}
	for i := range m.Instances {
		if !given[i] {
			m.MissingInstances = append(m.MissingInstances, i)
		}
	}
}

// earliestEarlyStop is the earliest time into its run at which the early
// stop stopped one of the results, 0 when it stopped none.
func earliestEarlyStop(results []*Summary) float64 {
	var at *float64
	for _, r := range results {
		if r.EarlyStopAt > 0 {
			at = earliestStop(at, &r.EarlyStopAt)
		}
	}
	if at == nil {
		return 0
	}
	return *at
}

// joinDistinct joins the distinct non-empty values of a field of the
// results, in the order first seen.
func joinDistinct(results []*Summary, sep string, field func(*Summary) string) string {
	var vals []string
	for _, r := range results {
		if v := field(r); v != "" && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return strings.Join(vals, sep)
}

// mergedMetric is one metric's statistics merged over the results, with
// its definition (type, contains, unit, description, custom mark).
type mergedMetric struct {
	def MetricSummary
	st  *metrics.Stats
}

// metricSet is the merged metrics by name.
type metricSet map[string]*mergedMetric

// stats is a statsFunc over the merged metrics.
func (set metricSet) stats(name string) *metrics.Stats {
	if m := set[name]; m != nil {
		return m.st
	}
	return nil
}

// summaries are the merged metrics as the result file keeps them, counter
// rates over dur.
func (set metricSet) summaries(dur time.Duration) map[string]MetricSummary {
	out := make(map[string]MetricSummary, len(set))
	for name, m := range set {
		out[name] = MetricSummary{Type: m.def.Type, Contains: m.def.Contains, Unit: m.def.Unit, Desc: m.def.Desc, Custom: m.def.Custom,
			Values: Values(m.st, dur), Histogram: NewHistogram(m.st)}
	}
	return out
}

// mergeMetrics merges the metrics of the results (ms[i] is result i's,
// nil when it has none), in the given order; where says which metrics
// these are in errors ("" or "scenario chat: ").
func mergeMetrics(ms []map[string]MetricSummary, order []int, where string) (metricSet, error) {
	set := metricSet{}
	for _, i := range order {
		for _, name := range slices.Sorted(maps.Keys(ms[i])) {
			m := ms[i][name]
			st, err := statsOf(m)
			if err != nil {
				return nil, &InputError{i, fmt.Errorf("%smetric %s: %w", where, name, err)}
			}
			prev, ok := set[name]
			switch {
			case !ok:
				set[name] = &mergedMetric{def: m, st: st}
			case prev.def.Type != m.Type:
				return nil, &InputError{i, fmt.Errorf("%smetric %s is a %s, a %s in the results before", where, name, m.Type, prev.def.Type)}
			default:
				prev.st.Merge(st)
				// A file from before the mark has none: the metric is
				// the script's if any input says so.
				prev.def.Custom = prev.def.Custom || m.Custom
			}
		}
	}
	return set, nil
}

// statsOf rebuilds the statistics a metric's summary was made from, as far
// as merging needs them.
func statsOf(m MetricSummary) (*metrics.Stats, error) {
	v := m.Values
	// Count 1 stands for the samples of a counter or gauge, whose number
	// the file does not keep: Values does not use it, Stats.Merge needs
	// it non-zero.
	switch m.Type {
	case metrics.Counter.String():
		return &metrics.Stats{Type: metrics.Counter, Count: 1, Sum: v["count"]}, nil
	case metrics.Gauge.String():
		return &metrics.Stats{Type: metrics.Gauge, Count: 1, Last: v["value"], Min: v["min"], Max: v["max"]}, nil
	case metrics.Rate.String():
		passes, fails := int64(v["passes"]), int64(v["fails"])
		return &metrics.Stats{Type: metrics.Rate, Count: passes + fails, NonZero: passes}, nil
	case metrics.Trend.String():
		if m.Histogram == nil {
			return nil, errors.New("a trend without its histogram")
		}
		return m.Histogram.Stats()
	}
	return nil, fmt.Errorf("unknown metric type %q", m.Type)
}

// sumServing adds up the counts of serving blocks: the results' (sc nil)
// or one scenario's; finish computes the rest.
func sumServing(results []*Summary, sc func(*Summary) *ScenarioSummary) Serving {
	var s Serving
	for _, r := range results {
		b := &r.Serving
		if sc != nil {
			ss := sc(r)
			if ss == nil {
				continue
			}
			b = &ss.Serving
		}
		s.Requests += b.Requests
		s.OK += b.OK
		s.Failed += b.Failed
		s.Interrupted += b.Interrupted
		s.OutputTokens += b.OutputTokens
		s.PromptTokens += b.PromptTokens
		s.ReasoningTokens += b.ReasoningTokens
		s.CachedTokens += b.CachedTokens
		s.Documents += b.Documents
		s.Iterations += b.Iterations
		s.InterruptedIterations += b.InterruptedIterations
		s.WarmupRequests += b.WarmupRequests
		s.WarmupIterations += b.WarmupIterations
		s.DroppedIterations += b.DroppedIterations
		s.Goodput = addGoodput(s.Goodput, b.Goodput)
	}
	return s
}

// mergeScenarios merges the scenarios by name, in the order first seen;
// their timelines as the run's, from the merged run's start.
func mergeScenarios(results []*Summary, order []int, mergedStart time.Time) ([]ScenarioSummary, error) {
	var names []string
	for _, r := range results {
		for _, sc := range r.Scenarios {
			if !slices.Contains(names, sc.Name) {
				names = append(names, sc.Name)
			}
		}
	}
	var out []ScenarioSummary
	for _, name := range names {
		find := func(r *Summary) *ScenarioSummary {
			for i := range r.Scenarios {
				if r.Scenarios[i].Name == name {
					return &r.Scenarios[i]
				}
			}
			return nil
		}
		ms := make([]map[string]MetricSummary, len(results))
		var start, end time.Time
		for i, r := range results {
			sc := find(r)
			if sc == nil {
				continue
			}
			ms[i] = sc.Metrics
			s, e := r.Meta.Start, r.Meta.Start.Add(seconds(sc.Serving.DurationSeconds))
			if start.IsZero() || s.Before(start) {
				start = s
			}
			if e.After(end) {
				end = e
			}
		}
		set, err := mergeMetrics(ms, order, "scenario "+name+": ")
		if err != nil {
			return nil, err
		}
		dur := end.Sub(start)
		sv := sumServing(results, find)
		sv.Finish(dur, set.stats)
		timeline := mergeTimelines(results, mergedStart, func(r *Summary) []TimelinePoint {
			if sc := find(r); sc != nil {
				return sc.Timeline
			}
			return nil
		})
		out = append(out, ScenarioSummary{Name: name, Serving: sv, Latency: LatencyRows(set.stats), Metrics: set.summaries(dur), Timeline: timeline})
	}
	return out, nil
}

// seconds is the duration of a number of seconds, to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// mergeErrorClasses adds up error classes (the errors or the retries) by
// class, with their messages deduplicated and capped; sorted as summarize.Build
// sorts them.
func mergeErrorClasses(results []*Summary, classes func(*Summary) []ErrorClassCount) []ErrorClassCount {
	byClass := map[string]*ErrorClassCount{}
	for _, r := range results {
		for _, c := range classes(r) {
			m, ok := byClass[c.Class]
			if !ok {
				m = &ErrorClassCount{Class: c.Class}
				byClass[c.Class] = m
			}
			m.Count += c.Count
			m.Messages = addMessages(m.Messages, c.Messages, maxMessagesPerClass)
		}
	}
	var out []ErrorClassCount
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		out = append(out, *byClass[class])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// addMessages adds the counts of msgs to those of the same message in
// list (the same errorkey.Of: as a run groups them), and appends the
// others while list has fewer than limit.
func addMessages(list, msgs []ErrorCount, limit int) []ErrorCount {
	for _, msg := range msgs {
		key := errorkey.Of(msg.Message)
		i := slices.IndexFunc(list, func(e ErrorCount) bool { return errorkey.Of(e.Message) == key })
		switch {
		case i >= 0:
			list[i].Count += msg.Count
		case len(list) < limit:
			list = append(list, msg)
		}
	}
	return list
}

// mergeScriptErrors adds up the script errors by message, most frequent
// first; the messages beyond maxScriptErrors count in the other errors.
func mergeScriptErrors(results []*Summary) ([]ErrorCount, int64) {
	var list []ErrorCount
	var other int64
	for _, r := range results {
		list = addMessages(list, r.ScriptErrors, math.MaxInt)
		other += r.OtherScriptErrors
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Count > list[j].Count })
	if len(list) > maxScriptErrors {
		for _, e := range list[maxScriptErrors:] {
			other += e.Count
		}
		list = list[:maxScriptErrors]
	}
	return list, other
}

// mergeChecks adds up the checks by group and name, sorted as summarize.Build sorts
// them.
func mergeChecks(results []*Summary) []Check {
	type key struct{ group, name string }
	byKey := map[key]*Check{}
	for _, r := range results {
		for _, c := range r.Checks {
			k := key{c.Group, c.Name}
			m, ok := byKey[k]
			if !ok {
				m = &Check{Name: c.Name, Group: c.Group}
				byKey[k] = m
			}
			m.Passes += c.Passes
			m.Fails += c.Fails
		}
	}
	var out []Check
	for _, c := range byKey {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// mergeClients keeps the worst figures of the load generators, and every
// cause and warning, each prefixed with its result's label. The machines'
// figures are each one machine's and stay out.
func mergeClients(results []*Summary, labels []string) health.Report {
	out := health.Report{CPU: -1}
	var causes []string
	for i, r := range results {
		c := r.Client
		out.CPU = max(out.CPU, c.CPU)
		out.Procs = max(out.Procs, c.Procs)
		out.SchedDelayP99 = max(out.SchedDelayP99, c.SchedDelayP99)
		out.SchedDelayMax = max(out.SchedDelayMax, c.SchedDelayMax)
		if c.Cause != "" {
			causes = append(causes, labels[i]+": "+c.Cause)
		}
		for _, w := range c.Warnings {
			out.Warnings = append(out.Warnings, labels[i]+": "+w)
		}
	}
	out.Cause = strings.Join(causes, "; ")
	return out
}

// mergeTokenChecks adds up the token checks by source and judges the sums.
func mergeTokenChecks(results []*Summary) []TokenCheck {
	usage, other := map[string]int64{}, map[string]int64{}
	for _, r := range results {
		for _, tc := range r.TokenChecks {
			usage[tc.Source] += tc.UsageTokens
			other[tc.Source] += tc.CheckTokens
		}
	}
	var out []TokenCheck
	for _, source := range slices.Sorted(maps.Keys(usage)) {
		out = append(out, NewTokenCheck(source, usage[source], other[source]))
	}
	return out
}

// mergePromptChecks adds up the prompt checks and judges the sums; nil
// when no result has one.
func mergePromptChecks(results []*Summary) *PromptCheck {
	var requests, requested, usage int64
	for _, r := range results {
		if pc := r.PromptCheck; pc != nil {
			requests += pc.Requests
			requested += pc.RequestedTokens
			usage += pc.UsageTokens
		}
	}
	if requests == 0 {
		return nil
	}
	return NewPromptCheck(requests, requested, usage)
}

// mergeUniqueCaches adds up the unique-prompt checks and judges the sums;
// nil when no result has one. meta is the merged run's.
func mergeUniqueCaches(results []*Summary, meta Meta) *UniqueCache {
	var sum UniqueCache
	for _, r := range results {
		if u := r.UniqueCache; u != nil {
			sum.Requests += u.Requests
			sum.CachedRequests += u.CachedRequests
			sum.PromptTokens += u.PromptTokens
			sum.CachedTokens += u.CachedTokens
		}
	}
	if sum.Requests == 0 {
		return nil
	}
	return NewUniqueCache(sum.Requests, sum.CachedRequests, sum.PromptTokens, sum.CachedTokens, meta)
}

// mergeThresholds evaluates the results' thresholds again on the merged
// metrics, in the order first seen.
func mergeThresholds(results []*Summary, set metricSet, dur time.Duration) []ThresholdResult {
	type key struct{ metric, threshold string }
	var order []key
	first := map[key]ThresholdResult{}
	passed, skipped := map[key]bool{}, map[key]bool{}
	for _, r := range results {
		for _, t := range r.Thresholds {
			k := key{t.Metric, t.Threshold}
			if f, ok := first[k]; !ok {
				order = append(order, k)
				first[k], passed[k], skipped[k] = t, true, true
			} else if f.Skipped && !t.Skipped {
				first[k] = t // a result that judged it speaks for it
			}
			passed[k] = passed[k] && t.Passed
			skipped[k] = skipped[k] && t.Skipped
		}
	}
	out := make([]ThresholdResult, len(order))
	for i, k := range order {
		t := first[k]
		t.Skipped = skipped[k]
		out[i] = reevaluate(t, passed[k], set, dur)
	}
	return out
}

// reevaluate evaluates a threshold on the merged metrics over dur, as
// runtime/threshold does at the end of a run. A threshold whose metric no
// result has keeps the outcome of the first result that did not skip it
// (each result judged the same absence of samples), passed only if it
// passed in every result, skipped only if skipped in every one.
func reevaluate(t ThresholdResult, passedAll bool, set metricSet, dur time.Duration) ThresholdResult {
	t.Passed = passedAll
	notes := "not re-evaluated after merge: "
	expr, err := threshold.ParseExpression(t.Threshold)
	if err != nil {
		t.Note = notes + err.Error()
		return t
	}
	m := set[t.Metric]
	if m == nil {
		return t
	}
	if !threshold.Applies(m.st.Type, expr.Method) {
		t.Note = notes + fmt.Sprintf("aggregation %s does not apply to a %s metric", expr.Aggregation(), m.st.Type)
		return t
	}
	var v float64
	switch expr.Method {
	case threshold.MethodCount:
		v = m.st.Sum
	case threshold.MethodRate:
		v = m.st.Rate()
		if m.st.Type == metrics.Counter {
			if dur <= 0 {
				t.Passed, t.Value, t.Note = true, 0, "no elapsed time to compute a rate per second"
				return t
			}
			v = m.st.Sum / dur.Seconds()
		}
	case threshold.MethodValue:
		v = m.st.Last
	case threshold.MethodAvg:
		v = m.st.Mean()
	case threshold.MethodMin:
		v = m.st.Min
	case threshold.MethodMax:
		v = m.st.Max
	case threshold.MethodMed, threshold.MethodPercentile:
		v = m.st.Percentile(expr.P)
	}
	t.Value, t.Passed, t.Note, t.Skipped = v, expr.Op.Compare(v, expr.Bound), "", false
	return t
}

// mergeOutputs adds up the output reports by output, in the order first
// seen; their errors are joined.
func mergeOutputs(results []*Summary) []OutputReport {
	var out []OutputReport
	for _, r := range results {
		for _, o := range r.Outputs {
			i := slices.IndexFunc(out, func(m OutputReport) bool { return m.Output == o.Output })
			if i < 0 {
				out = append(out, OutputReport{Output: o.Output})
				i = len(out) - 1
			}
			m := &out[i]
			m.Written += o.Written
			m.Dropped += o.Dropped
			for reason, n := range o.Reasons {
				if m.Reasons == nil {
					m.Reasons = map[string]int64{}
				}
				m.Reasons[reason] += n
			}
			if o.Err != "" && !strings.Contains(m.Err, o.Err) {
				m.Err = strings.TrimPrefix(m.Err+"; "+o.Err, "; ")
			}
		}
	}
	return out
}

// mergeTimelines adds up the points of the results' timelines (of the
// run, or of one scenario: those timeline picks) that end
// in the same second since start: each result's points are shifted by its
// start's offset, rounded to whole seconds, and a point ending at T counts
// in the second ⌈T⌉ (a run's last, shorter interval meets the others'
// last). Counts add and the merged point ends at the latest of their ends;
// its percentiles are the highest of the results' (the merged
// distribution's lie between the lowest and the highest). A version-2
// result's output tokens, those of the requests completed in each
// interval, add as they are: the nearest its file has to the tokens that
// arrived then.
func mergeTimelines(results []*Summary, start time.Time, timeline func(*Summary) []TimelinePoint) []TimelinePoint {
	bySecond := map[float64]*TimelinePoint{}
	for _, r := range results {
		shift := math.Round(r.Meta.Start.Sub(start).Seconds())
		for _, p := range timeline(r) {
			p.T += shift
			second := math.Ceil(p.T)
			m, ok := bySecond[second]
			if !ok {
				bySecond[second] = &p
				continue
			}
			m.T = max(m.T, p.T)
			m.Seconds = max(m.Seconds, p.Seconds)
			m.Requests += p.Requests
			m.Failed += p.Failed
			m.OutputTokens += p.OutputTokens
			m.ActiveVUs += p.ActiveVUs
			m.InFlight += p.InFlight
			m.TTFTP50, m.TTFTP99 = max(m.TTFTP50, p.TTFTP50), max(m.TTFTP99, p.TTFTP99)
			m.E2EP50, m.E2EP99 = max(m.E2EP50, p.E2EP50), max(m.E2EP99, p.E2EP99)
		}
	}
	var out []TimelinePoint
	for _, second := range slices.Sorted(maps.Keys(bySecond)) {
		out = append(out, *bySecond[second])
	}
	return out
}

// mergePreflights lists the results' preflight probes, each target's
// first.
func mergePreflights(results []*Summary) []Probe {
	var out []Probe
	seen := map[string]bool{}
	for _, r := range results {
		for _, p := range r.Preflight {
			key := p.Target + "\x00" + string(p.API) + "\x00" + p.Model
			if !seen[key] {
				seen[key] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// earliestStop is the earlier of two processes' stops (of a scenario's
// part, of the early stop), in seconds into their run; nil when neither
// stopped.
func earliestStop(a, b *float64) *float64 {
	if a == nil || (b != nil && *b < *a) {
		return b
	}
	return a
}
