package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// soakEvent is the update at second i of a run at a period of 1 s, shaped
// as a run on the simulator sends it (one scenario, a server and a GPU,
// figures with all their digits): about 1 KB encoded.
func soakEvent(i int) Event {
	f := Figures{Requests: int64(10 + i%7), Failed: int64(i % 3), ReqRate: float64(10+i%7) * 1.0000123, TokRate: 255.9992458262218 + float64(i%11),
		TTFT: Percentiles{P50: 30.975 + float64(i%5), P90: 38.591, P99: 39.823119 + float64(i%13)},
		TPOT: Percentiles{P50: 14.207, P90: 15.463, P99: 16.3379903},
		E2E:  Percentiles{P50: 243.967, P90: 257.663, P99: 259.677936 + float64(i%17)}}
	if i%3 > 0 {
		f.Errors = map[string]int64{"timeout": int64(i % 3)}
	}
	running, kv, util, power := 4.0, 0.00030517578125+float64(i%9)/100, 1.0, 80.0+float64(i%5)
	return Event{V: Version, Elapsed: float64(i + 1), Period: 1.000001473,
		Scenarios: []Scenario{{Name: "default", Phase: "running", Progress: 0.24716855937499999, ETA: 6.022651525, VUs: 4, MaxVUs: 4,
			Iterations: int64(34 * i), Figures: f}},
		All: f,
		Servers: []Server{{Kind: "server", URL: "http://127.0.0.1:45519/metrics", Engine: "vLLM", Running: &running, KVCache: &kv},
			{Kind: "gpu", URL: "http://127.0.0.1:45519/dcgm/metrics", Engine: "DCGM exporter", GPUUtil: &util, Power: &power}}}
}

// soak is a run of n updates, its last marked done.
func soak(n int) []Event {
	events := make([]Event, n)
	for i := range events {
		events[i] = soakEvent(i)
	}
	events[n-1].Done = true
	return events
}

// reportOf is the report of events, and the events and notes it holds.
func reportOf(t *testing.T, events []Event, notes ...string) (page string, drawn []Event, shown []string) {
	t.Helper()
	r := NewReport()
	for _, ev := range events {
		r.Add(ev)
	}
	for _, n := range notes {
		r.Note(n)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page = b.String()
	m := regexp.MustCompile(`(?s)const events = (.*?);\n`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the report has no events")
	}
	if err := json.Unmarshal([]byte(m[1]), &drawn); err != nil {
		t.Fatalf("the report's events: %v", err)
	}
	m = regexp.MustCompile(`const staticReport = (.*?);\n`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the report is not marked as one: its page would open a stream")
	}
	var meta struct{ Notes []string }
	if err := json.Unmarshal([]byte(m[1]), &meta); err != nil {
		t.Fatalf("the report's notes: %v", err)
	}
	return page, drawn, meta.Notes
}

// totals are what a run's updates add up to, which folding keeps: the
// requests, failures and errors, and the requests and tokens the rates
// make over the periods.
type totals struct {
	requests, failed, timeouts int64
	rateRequests, rateTokens   float64
}

func totalsOf(events []Event) totals {
	var s totals
	for _, ev := range events {
		s.requests += ev.All.Requests
		s.failed += ev.All.Failed
		s.timeouts += ev.All.Errors["timeout"]
		s.rateRequests += ev.All.ReqRate * ev.Period
		s.rateTokens += ev.All.TokRate * ev.Period
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }

// A run within MaxReportUpdates is drawn update by update, with no note;
// a longer one is folded to fit, its counts and rates kept whole, its
// last update (the final state) unfolded, and the page says so. The
// report's size stops growing with the run: the figures printed are
// those of docs/dashboard.md.
func TestReportFoldsALongRunToItsBounds(t *testing.T) {
	sizes := map[string]int{}
	for _, tc := range []struct {
		name       string
		updates    int
		wantDrawn  int
		wantFolded string
	}{
		{"10 minutes", 600, 600, ""},
		{"2 hours", 7200, 3601, "every 2 consecutive updates"},
		// Folded in twos, then in fours: between half the bound and the
		// bound.
		{"3 hours", 3 * 3600, 0, "every 4 consecutive updates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := soak(tc.updates)
			page, drawn, notes := reportOf(t, events)
			sizes[tc.name] = len(page)
			t.Logf("%d updates at 1 s: a report of %d updates drawn, %.2f MB", tc.updates, len(drawn), float64(len(page))/1e6)
			if tc.wantDrawn > 0 && len(drawn) != tc.wantDrawn {
				t.Errorf("%d updates drawn, want %d", len(drawn), tc.wantDrawn)
			}
			if len(drawn) > MaxReportUpdates+1 || len(drawn) < MaxReportUpdates/2 && len(drawn) < tc.updates {
				t.Errorf("%d updates drawn, beyond the bound of %d and the last, or folded below half of it", len(drawn), MaxReportUpdates)
			}
			switch {
			case tc.wantFolded == "" && len(notes) != 0:
				t.Errorf("a report of every update has notes %q", notes)
			case tc.wantFolded != "" && (len(notes) != 1 || !strings.Contains(notes[0], tc.wantFolded) ||
				!strings.Contains(notes[0], fmt.Sprintf("This run's %d updates are drawn as %d", tc.updates, len(drawn)))):
				t.Errorf("notes %q, want one saying the %d updates are drawn as %d, %s", notes, tc.updates, len(drawn), tc.wantFolded)
			}
			got, want := totalsOf(drawn), totalsOf(events)
			if got.requests != want.requests || got.failed != want.failed || got.timeouts != want.timeouts ||
				!near(got.rateRequests, want.rateRequests) || !near(got.rateTokens, want.rateTokens) {
				t.Errorf("the drawn updates add up to %+v, the run's to %+v", got, want)
			}
			last, wantLast := drawn[len(drawn)-1], events[len(events)-1]
			lastJSON, _ := json.Marshal(last)
			wantJSON, _ := json.Marshal(wantLast)
			if !bytes.Equal(lastJSON, wantJSON) {
				t.Errorf("the report's last update is\n%s\nthe run's\n%s", lastJSON, wantJSON)
			}
		})
	}
	if sizes["3 hours"] > sizes["2 hours"]*11/10 {
		t.Errorf("the report of 3 hours is %d bytes, more than 1.1 times that of 2 hours, %d: its size is not bounded", sizes["3 hours"], sizes["2 hours"])
	}
}

// An update too large for the bound of bytes is folded with the next
// even below MaxReportUpdates.
func TestReportFoldsToItsSizeBound(t *testing.T) {
	const updates = 64
	huge := make([]Scenario, 0, 100)
	for i := range cap(huge) {
		huge = append(huge, Scenario{Name: fmt.Sprintf("scenario-%03d-%s", i, strings.Repeat("x", 300))})
	}
	r := NewReport()
	for i := range updates {
		r.Add(Event{V: Version, Elapsed: float64(i + 1), Period: 1, Scenarios: huge})
	}
	one, err := encodeEvent(Event{V: Version, Scenarios: huge})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.kept)*len(one) > MaxReportSize || r.size > MaxReportSize {
		t.Errorf("%d updates of %d bytes kept, %d bytes: beyond the bound of %d", len(r.kept), len(one), r.size, MaxReportSize)
	}
	if len(r.kept) < updates && r.every == 1 {
		t.Error("updates were left out without being folded")
	}
}

// Two updates folded are one over both periods: counts (requests, errors,
// drops, lagged iterations) added, rates, mean lag and energy per token
// over both, each latency percentile (ITL's too) the higher, progress the
// later's.
func TestFold(t *testing.T) {
	j := func(v float64) *float64 { return &v }
	a := Event{V: Version, Elapsed: 1, Period: 1, JoulesPerToken: j(2),
		Scenarios: []Scenario{
			{Name: "gone", Phase: "done", Iterations: 5, PeriodDropped: 1, Lagged: 2, Lag: 3, Figures: Figures{Requests: 2, ReqRate: 2, Errors: map[string]int64{"http_5xx": 1}}},
			{Name: "both", Phase: "running", Iterations: 1, Dropped: 1, PeriodDropped: 1, Lagged: 1, Lag: 10,
				Figures: Figures{Requests: 4, ReqRate: 4, TTFT: Percentiles{P50: 10, P90: 30, P99: 90}, ITL: Percentiles{P50: 5, P90: 6, P99: 40}}},
		},
		All: Figures{Requests: 6, Failed: 1, ReqRate: 6, TokRate: 60, Errors: map[string]int64{"http_5xx": 1}, TTFT: Percentiles{P50: 10, P90: 30, P99: 90},
			ITL: Percentiles{P50: 5, P90: 6, P99: 40}}}
	b := Event{V: Version, Elapsed: 4, Period: 3, JoulesPerToken: j(4),
		Scenarios: []Scenario{
			{Name: "both", Phase: "running", Iterations: 7, Dropped: 3, PeriodDropped: 2, Lagged: 3, Lag: 2,
				Figures: Figures{Requests: 6, ReqRate: 2, TTFT: Percentiles{P50: 20, P90: 25, P99: 50}, ITL: Percentiles{P50: 7, P90: 8, P99: 9}}},
			{Name: "new", Phase: "running", Iterations: 3, Figures: Figures{Requests: 3, ReqRate: 1}},
		},
		All: Figures{Requests: 9, ReqRate: 3, TokRate: 20, Errors: map[string]int64{"timeout": 2}, TTFT: Percentiles{P50: 20, P90: 25, P99: 50},
			ITL: Percentiles{P50: 7, P90: 8, P99: 9}}}
	got := fold(a, b)
	// 60 tokens at 2 J and 60 at 4 J: 3 J a token.
	want := Event{V: Version, Elapsed: 4, Period: 4, JoulesPerToken: j(3),
		Scenarios: []Scenario{
			{Name: "gone", Phase: "done", Iterations: 5, PeriodDropped: 1, Lagged: 2, Lag: 3, Figures: Figures{Requests: 2, ReqRate: 0.5, Errors: map[string]int64{"http_5xx": 1}}},
			{Name: "both", Phase: "running", Iterations: 7, Dropped: 3, PeriodDropped: 3, Lagged: 4, Lag: 4,
				Figures: Figures{Requests: 10, ReqRate: 2.5, TTFT: Percentiles{P50: 20, P90: 30, P99: 90}, ITL: Percentiles{P50: 7, P90: 8, P99: 40}}},
			{Name: "new", Phase: "running", Iterations: 3, Figures: Figures{Requests: 3, ReqRate: 0.75}},
		},
		All: Figures{Requests: 15, Failed: 1, ReqRate: 3.75, TokRate: 30, Errors: map[string]int64{"http_5xx": 1, "timeout": 2}, TTFT: Percentiles{P50: 20, P90: 30, P99: 90},
			ITL: Percentiles{P50: 7, P90: 8, P99: 40}}}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("fold =\n%s\nwant\n%s", gotJSON, wantJSON)
	}
	if len(a.All.Errors) != 1 || len(b.All.Errors) != 1 {
		t.Errorf("fold changed its inputs' errors: %v, %v", a.All.Errors, b.All.Errors)
	}
}

// A scenario's name that closes the script element stays text: the
// report is a page others open.
func TestReportKeepsNamesInsideItsScript(t *testing.T) {
	hostile := "</script><script>alert(1)</script>"
	page, drawn, notes := reportOf(t, []Event{{V: Version, Elapsed: 1, Period: 1, Scenarios: []Scenario{{Name: hostile}}, Done: true}}, "note "+hostile)
	if strings.Contains(page, "<script>alert") {
		t.Error("the report's HTML holds the scenario's name unescaped")
	}
	if drawn[0].Scenarios[0].Name != hostile || notes[0] != "note "+hostile {
		t.Errorf("the name reads back as %q, the note as %q", drawn[0].Scenarios[0].Name, notes[0])
	}
}

func writeRecording(t *testing.T, events []Event) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.dash.gz")
	if w := recordEvents(t, path, 0, events...); w != "" {
		t.Fatal(w)
	}
	return path
}

// A recording cut short (its run killed) is reported up to the cut, the
// page and the warning saying so.
func TestWriteReportOfARecordingCutShort(t *testing.T) {
	whole := writeRecording(t, soak(200))
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.dash.gz")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cut.html")
	warning, err := WriteReport(cut, out)
	if err != nil {
		t.Fatal(err)
	}
	read, _ := ReadRecording(cut)
	if len(read) == 0 || len(read) >= 200 {
		t.Fatalf("the cut recording reads as %d updates, want some of the 200", len(read))
	}
	if !strings.Contains(warning, cut) || !strings.Contains(warning, fmt.Sprintf("the %d updates before the cut", len(read))) {
		t.Errorf("warning %q does not name the file and the updates reported", warning)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("The recording cut.dash.gz was cut short after %d updates", len(read)); !strings.Contains(string(page), want) {
		t.Errorf("the report does not say %q", want)
	}
}

func TestWriteReportRefusesBadInput(t *testing.T) {
	header := `{"format":"llmrun-dashboard","version":1}` + "\n"
	good := writeRecording(t, soak(3))
	for _, tc := range []struct {
		name    string
		in, out string
		want    string
	}{
		{"not a recording", gzipFile(t, "{\"hello\":1}\n"), "", ":1: not a dashboard recording"},
		{"another version", gzipFile(t, `{"format":"llmrun-dashboard","version":2}`+"\n"), "", ":1: recording version 2, this llmrun reads version 1"},
		{"a bad line", gzipFile(t, header+"{\"v\":1}\nnot json\n"), "", ":3: not a dashboard event"},
		{"no update", gzipFile(t, header), "", "holds no update to report"},
		{"not gzip", writeFile(t, "plain.dash", header), "", "not a gzip-compressed dashboard recording"},
		{"the recording itself", good, good, "that is the recording itself"},
		{"a directory", good, t.TempDir(), "cannot write there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.out
			if out == "" {
				out = filepath.Join(t.TempDir(), "out.html")
			}
			_, err := WriteReport(tc.in, out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteReport = %v, want an error saying %q", err, tc.want)
			}
			// An error of the recording names it; one of -o names that.
			named := tc.in
			if tc.out != "" {
				named = tc.out
			}
			if !strings.Contains(err.Error(), named) {
				t.Errorf("error %q does not name %s", err, named)
			}
			if _, statErr := os.Stat(out); tc.out == "" && statErr == nil {
				t.Errorf("a report %s was written anyway", out)
			}
		})
	}
	if b, err := os.ReadFile(good); err != nil || len(b) == 0 {
		t.Errorf("the recording given as -o was changed: %v", err)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReportName(t *testing.T) {
	for in, want := range map[string]string{
		"soak.dash.gz":     "soak.dash.html",
		"dir/run.gz":       "dir/run.html",
		"recording":        "recording.html",
		"run.ndjson":       "run.ndjson.html",
		"archive.gz.store": "archive.gz.store.html",
	} {
		if got := ReportName(in); got != want {
			t.Errorf("ReportName(%q) = %q, want %q", in, got, want)
		}
	}
}
