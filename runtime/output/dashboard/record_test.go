package dashboard

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func recordEvents(t *testing.T, path string, limit int64, events ...Event) string {
	t.Helper()
	r, err := CreateRecorder(path, limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		b, err := encodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		r.Record(b)
	}
	warning, err := r.Close()
	if err != nil {
		t.Fatal(err)
	}
	return warning
}

func TestRecordingRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.dash.gz")
	want := []Event{
		{V: Version, Elapsed: 1, Period: 1, All: Figures{Requests: 3}},
		{V: Version, Elapsed: 2, Period: 1, All: Figures{Requests: 5}, Done: true},
	}
	if w := recordEvents(t, path, 0, want...); w != "" {
		t.Errorf("a recording below its limit warned %q", w)
	}
	got, err := ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[1].All.Requests != 5 || !got[1].Done || got[0].Elapsed != 1 {
		t.Errorf("read %+v, want %+v", got, want)
	}
}

// On reaching its limit a recording keeps the events before it, stays
// readable and says why it stopped.
func TestRecordingStopsAtItsLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.dash.gz")
	one, _ := encodeEvent(Event{V: Version, Elapsed: 1})
	events := make([]Event, 10)
	for i := range events {
		events[i] = Event{V: Version, Elapsed: 1}
	}
	warning := recordEvents(t, path, int64(3*(len(one)+1)), events...)
	if !strings.Contains(warning, "stopped at its limit") || !strings.Contains(warning, path) {
		t.Errorf("warning %q does not say the recording %s reached its limit", warning, path)
	}
	got, err := ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("the capped recording holds %d events, want 3", len(got))
	}
}

func TestCreateRecorderNamesAFileItCannotCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "run.dash.gz")
	if _, err := CreateRecorder(path, 0); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("CreateRecorder(%s) = %v, want an error naming the file", path, err)
	}
}

func gzipFile(t *testing.T, content string) string {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(content))
	z.Close()
	path := filepath.Join(t.TempDir(), "bad.dash.gz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadRecordingErrorsNameFileAndLine(t *testing.T) {
	header := `{"format":"llmrun-dashboard","version":1}` + "\n"
	good := `{"v":1,"t":1,"period":1,"scenarios":[],"all":{}}` + "\n"
	huge := `{"v":1,"x":"` + strings.Repeat("a", MaxEventSize) + `"}` + "\n"
	for _, tc := range []struct {
		name, content, want string
	}{
		{"empty", "", "empty"},
		{"not a recording", "{\"hello\":1}\n", ":1: not a dashboard recording"},
		{"unknown format version", `{"format":"llmrun-dashboard","version":99}` + "\n", ":1: recording version 99"},
		{"a line that is not an event", header + good + "not json\n", ":3: not a dashboard event"},
		{"an unknown event version", header + `{"v":7}` + "\n", ":2: event version 7"},
		{"a huge line", header + huge, ":2: a line longer than"},
		{"a cut last line", header + good + `{"v":1,"t"`, ":3: the last line has no newline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := gzipFile(t, tc.content)
			_, err := ReadRecording(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadRecording = %v, want an error naming %s and %q", err, path, tc.want)
			}
		})
	}
}

func TestReadRecordingNamesATruncatedGzip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.dash.gz")
	events := make([]Event, 50)
	for i := range events {
		events[i] = Event{V: Version, Elapsed: float64(i)}
	}
	recordEvents(t, path, 0, events...)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadRecording(path)
	if err == nil || !strings.Contains(err.Error(), path+":") {
		t.Errorf("ReadRecording of a truncated gzip = %v, want an error naming %s and a line", err, path)
	}
	notGzip := filepath.Join(t.TempDir(), "plain.json")
	os.WriteFile(notGzip, []byte("{}\n"), 0o644)
	if _, err := ReadRecording(notGzip); err == nil || !strings.Contains(err.Error(), notGzip) {
		t.Errorf("ReadRecording of a file not gzipped = %v, want an error naming it", err)
	}
}

// A replay sends each event at its recorded time divided by the speed.
func TestPaceSendsEventsAtTheirRecordedTime(t *testing.T) {
	events := []Event{{V: Version, Elapsed: 1}, {V: Version, Elapsed: 10}, {V: Version, Elapsed: 30}}
	for _, tc := range []struct {
		speed float64
		want  []time.Duration
	}{
		{1, []time.Duration{time.Second, 10 * time.Second, 30 * time.Second}},
		{10, []time.Duration{100 * time.Millisecond, time.Second, 3 * time.Second}},
		{0, []time.Duration{0, 0, 0}},
	} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			var got []time.Duration
			pace(t.Context(), events, tc.speed, func(Event) { got = append(got, time.Since(start)) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("speed %g: events sent at %v, want %v", tc.speed, got, tc.want)
			}
		})
	}
}

// A replay at speed 0 sends the whole run before it serves a page: the
// first page, asked for as soon as the address is known (as llmrun
// dashboard replay prints it before replaying), holds every event.
func TestReplayAtSpeedZeroServesTheWholeRunToTheFirstPage(t *testing.T) {
	const n = 3000
	events := make([]Event, n)
	for i := range events {
		events[i] = Event{V: Version, Elapsed: float64(i + 1), Period: 1, Scenarios: []Scenario{{Name: "chat", Phase: "running"}}}
	}
	d := replaying(t, events)
	resp, err := http.Get(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(page, []byte(`{"v":1,`)); got != n {
		t.Errorf("the first page holds %d of the run's %d events", got, n)
	}
}

// A run killed while it records (the Recorder never closed) leaves a
// recording readable, as one cut short, up to its last recordFlushEvery:
// not an empty file until gzip happened to write a block.
func TestRecordingOfAKilledRunIsReadableUpToItsLastSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "killed.dash.gz")
		r, err := CreateRecorder(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		const recorded = 12 // one a second
		for i := range recorded {
			time.Sleep(time.Second)
			b, err := encodeEvent(Event{V: Version, Elapsed: float64(i + 1), Period: 1})
			if err != nil {
				t.Fatal(err)
			}
			r.Record(b)
		}
		events, err := ReadRecording(path)
		if want := recorded - int(recordFlushEvery/time.Second); len(events) < want || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("a killed run's recording: %d events readable (%v), want %d or more, cut short", len(events), err, want)
		}
		r.Close()
	})
}
