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
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmrun/llmrun/internal/refused"
)

// Families is the exposition a Server answers with, for edits.
type Families map[string]*dto.MetricFamily

// Server answers GET /metrics with its families; it is an http.Handler,
// for a test that serves it beside other paths.
type Server struct {
	// URL is the /metrics URL, when Serve serves it.
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

// New parses the exposition in file, to be served.
func New(t testing.TB, file string) *Server {
	t.Helper()
	return &Server{families: Parse(t, file), edits: map[int][]func(Families){}}
}

// Serve parses the exposition in file and serves it on 127.0.0.1 until
// the test ends.
func Serve(t testing.TB, file string) *Server {
	t.Helper()
	s := New(t, file)
	srv := httptest.NewServer(s)
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

// ServeHTTP answers GET /metrics, after the edits registered for the
// scrape it is, and 404 to any other path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

// Recording is the path of an exposition recorded by
// runtime/servermetrics/engines ("vllm.prom", "dcgm.prom"), whose header
// says where it came from.
func Recording(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "runtime", "servermetrics", "engines", "testdata", name)
}

// FailingTargets are /metrics URLs on 127.0.0.1 that fail each in its own
// way until the test ends, by the kind of failure a scrape counts
// (servermetrics.Kind): one refuses the connection, one never answers,
// one answers 500, one 50 MiB (and says so in its Content-Length), one
// text that is no exposition.
func FailingTargets(t testing.TB) map[string]string {
	t.Helper()
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	handlers := map[string]http.HandlerFunc{
		"timeout": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		},
		"status": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "engine crashed", http.StatusInternalServerError)
		},
		// Declared, so that the scrape refuses it at once: a slow machine
		// reading 8 MiB of it could time out first.
		"too_large": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(50<<20))
			line := []byte("# " + strings.Repeat("x", 1021) + "\n")
			for range 50 << 10 {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		},
		"malformed": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<html><body>this is no exposition</body></html>\n"))
		},
	}
	kinds := map[string]string{refused.URL(t) + "/metrics": "refused"}
	for kind, h := range handlers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		kinds[srv.URL+"/metrics"] = kind
	}
	return kinds
}
