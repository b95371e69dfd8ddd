// Package promtest serves a recorded Prometheus exposition on 127.0.0.1
// for tests, whose values the test changes at chosen scrapes: the n-th
// GET /metrics is answered after the edits registered for it, so a test
// that knows which scrape is which (a run's marks) knows every window's
// deltas. The text is parsed and written by the Prometheus project's own
// expfmt.
package promtest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families is the exposition a Server answers with, for edits.
type Families map[string]*dto.MetricFamily

// Server answers GET /metrics with its families.
type Server struct {
	// URL is the /metrics URL.
	URL string

	mu       sync.Mutex
	families Families
	edits    map[int][]func(Families)
	scrapes  int
}

// Parse parses the exposition in file.
func Parse(t testing.TB, file string) Families {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return families
}

// Serve parses the exposition in file and serves it until the test ends.
func Serve(t testing.TB, file string) *Server {
	t.Helper()
	s := &Server{families: Parse(t, file), edits: map[int][]func(Families){}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/metrics"
	return s
}

// At registers an edit made just before the n-th scrape (from 1) is
// answered; the edits of one scrape are made in the order registered.
func (s *Server) At(n int, edit func(Families)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.edits[n] = append(s.edits[n], edit)
}

// Scrapes is how many scrapes were answered.
func (s *Server) Scrapes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scrapes
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.scrapes++
	for _, edit := range s.edits[s.scrapes] {
		edit(s.families)
	}
	var body bytes.Buffer
	names := make([]string, 0, len(s.families))
	for name := range s.families {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := expfmt.MetricFamilyToText(&body, s.families[name]); err != nil {
			s.mu.Unlock()
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	w.Write(body.Bytes())
}

// first is the first series of family name, which must be there.
func (f Families) first(name string) *dto.Metric {
	fam, ok := f[name]
	if !ok || len(fam.GetMetric()) == 0 {
		panic("promtest: the exposition has no series of " + name)
	}
	return fam.GetMetric()[0]
}

// Add adds d to the first series of the counter, gauge or untyped
// family name.
func (f Families) Add(name string, d float64) {
	m := f.first(name)
	switch {
	case m.Counter != nil:
		m.Counter.Value = ptr(m.GetCounter().GetValue() + d)
	case m.Gauge != nil:
		m.Gauge.Value = ptr(m.GetGauge().GetValue() + d)
	default:
		m.Untyped.Value = ptr(m.GetUntyped().GetValue() + d)
	}
}

// Set sets every series of the gauge family name to v.
func (f Families) Set(name string, v float64) {
	f.first(name)
	for _, m := range f[name].GetMetric() {
		m.Gauge = &dto.Gauge{Value: ptr(v)}
	}
}

// Observe adds n observations of v to the first series of the histogram
// family name: to its count, its sum, and each bucket whose bound is v or
// more.
func (f Families) Observe(name string, v float64, n uint64) {
	h := f.first(name).GetHistogram()
	h.SampleCount = ptr(h.GetSampleCount() + n)
	h.SampleSum = ptr(h.GetSampleSum() + v*float64(n))
	for _, b := range h.GetBucket() {
		if v <= b.GetUpperBound() {
			b.CumulativeCount = ptr(b.GetCumulativeCount() + n)
		}
	}
}

func ptr[T any](v T) *T { return &v }
