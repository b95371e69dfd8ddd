package servermetrics

import (
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/internal/pipetest"
	"github.com/llmrun/llmrun/internal/refused"
)

// pipeServer is a real net/http server reached over in-memory
// connections (net.Pipe), so that it runs inside a synctest bubble: a
// server on a socket would keep the bubble's clock from moving, since a
// goroutine waiting on a socket is not durably blocked. What is tested
// here is time (intervals, timeouts, skips), which only synctest tests
// without wall-clock windows; the scrapes over real sockets are tested in
// scrape_test.go.
type pipeServer struct {
	*pipetest.Listener
	srv    *http.Server
	client *http.Client
}

// startPipeServer serves handler until the test ends. Targets are
// http://NAME/metrics for any NAME; the handler sees NAME as r.Host.
func startPipeServer(t *testing.T, handler http.HandlerFunc) *pipeServer {
	p := &pipeServer{Listener: pipetest.NewListener(), srv: &http.Server{Handler: handler}}
	transport := &http.Transport{DialContext: p.Dial}
	p.client = &http.Client{Transport: transport}
	go p.srv.Serve(p)
	t.Cleanup(func() {
		p.srv.Close()
		transport.CloseIdleConnections()
	})
	return p
}

// hosts answers each host as its handler says: "ok" answers a gauge
// holding the number of requests that host had, "hang" blocks until the
// client goes or release is closed.
type hosts struct {
	release  chan struct{}
	requests sync.Map // host → *atomic.Int64
}

func newHosts() *hosts { return &hosts{release: make(chan struct{})} }

func (h *hosts) serve(w http.ResponseWriter, r *http.Request) {
	n, _ := h.requests.LoadOrStore(r.Host, new(atomic.Int64))
	count := n.(*atomic.Int64).Add(1)
	if strings.HasPrefix(r.Host, "hang") {
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	w.Write([]byte("# TYPE requests gauge\nrequests " + strconv.FormatInt(count, 10) + "\n"))
}

func TestScraperSkipsWhileAScrapeRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		begin := time.Now()
		h := newHosts()
		p := startPipeServer(t, h.serve)
		s, err := Start(t.Context(), Config{
			Targets:  []Target{{URL: "http://hang/metrics", Label: "slow"}, {URL: "http://ok/metrics"}},
			Interval: time.Second,
			Timeout:  time.Minute,
			Client:   p.client,
		})
		if err != nil {
			t.Fatal(err)
		}
		// The ticks at 1, 2, 3 and 4 s: the slow target's first scrape
		// never ends, so its next three are skipped; the other target is
		// read at each tick all the same.
		time.Sleep(4500 * time.Millisecond)
		synctest.Wait()
		stopping := time.Now()
		results := s.Stop()
		if took := time.Since(stopping); took != 0 {
			t.Errorf("Stop took %v: it waited for the hanging scrape", took)
		}
		slow, fast := results[0], results[1]
		if slow.Target.Label != "slow" || fast.Target.URL != "http://ok/metrics" {
			t.Fatalf("results out of the targets' order: %+v", results)
		}
		if slow.Skipped != 3 || slow.Scrapes != 0 || len(slow.Failures) != 0 {
			t.Errorf("slow target: %+v, want 3 skipped, no scrape, no failure (its last scrape was canceled by Stop)", slow.Counts)
		}
		if fast.Scrapes != 4 || fast.Skipped != 0 || len(fast.Series) != 4 {
			t.Errorf("other target: %+v with %d points, want 4 scrapes", fast.Counts, len(fast.Series))
		}
		for i, p := range fast.Series {
			if want := begin.Add(time.Duration(i+1) * time.Second); !p.Time.Equal(want) {
				t.Errorf("point %d at %v, want %v", i, p.Time, want)
			}
		}
	})
}

func TestScraperCountsTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHosts()
		p := startPipeServer(t, h.serve)
		s, err := Start(t.Context(), Config{
			Targets:  []Target{{URL: "http://hang/metrics"}},
			Interval: time.Second,
			Timeout:  500 * time.Millisecond,
			Client:   p.client,
		})
		if err != nil {
			t.Fatal(err)
		}
		// Scrapes start at 1, 2, 3 and 4 s and time out half a second
		// later, before the next tick: nothing is skipped.
		time.Sleep(4750 * time.Millisecond)
		synctest.Wait()
		r := s.Stop()[0]
		if r.Failures[KindTimeout] != 4 || r.Skipped != 0 || r.Scrapes != 0 || len(r.Series) != 0 {
			t.Errorf("%+v, want 4 timeouts and nothing else", r.Counts)
		}
		if r.LastError == nil || r.LastError.Kind != KindTimeout {
			t.Errorf("last error %v, want a timeout", r.LastError)
		}
	})
}

func TestScraperMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHosts()
		p := startPipeServer(t, h.serve)
		s, err := Start(t.Context(), Config{
			Targets:  []Target{{URL: "http://ok/metrics"}, {URL: "http://hang/metrics"}},
			Interval: time.Hour,
			Timeout:  2 * time.Second,
			Client:   p.client,
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = s.Mark(t.Context(), "start")
		if took := time.Since(start); took != 2*time.Second {
			t.Errorf("the mark took %v, want the scrape timeout, 2s", took)
		}
		var scrapeErr *ScrapeError
		if !errors.As(err, &scrapeErr) || scrapeErr.Kind != KindTimeout || !strings.Contains(err.Error(), "http://hang/metrics") {
			t.Errorf("mark error %v, want the hanging target's timeout", err)
		}
		time.Sleep(time.Second)
		close(h.release)
		if err := s.Mark(t.Context(), "end"); err != nil {
			t.Errorf("second mark: %v", err)
		}
		results := s.Stop()
		ok, hung := results[0], results[1]
		first, found := ok.Mark("start")
		if !found || !first.Time.Equal(start) {
			t.Errorf("mark start of the answering target: %v at %v, want a snapshot at %v", found, first.Time, start)
		}
		last, found := ok.Mark("end")
		if v, _ := Sum(last, Selector{Name: "requests"}); !found || v != 2 {
			t.Errorf("mark end: %v, requests %v; want the second request's snapshot", found, v)
		}
		if _, found := hung.Mark("start"); found {
			t.Error("the hanging target has a start snapshot")
		}
		if len(hung.Marks) != 2 || hung.Marks[0].Err == nil || hung.Marks[0].Err.Kind != KindTimeout || hung.Marks[1].Err != nil {
			t.Errorf("hanging target's marks %+v, want a timeout then a snapshot", hung.Marks)
		}
		if ok.Scrapes != 2 || len(ok.Series) != 2 || hung.Failures[KindTimeout] != 1 || hung.Scrapes != 1 {
			t.Errorf("counts %+v and %+v", ok.Counts, hung.Counts)
		}
		if err := s.Mark(t.Context(), "after"); err == nil {
			t.Error("a mark after Stop was taken")
		}
		if again := s.Stop(); len(again) != 2 || len(again[0].Marks) != 2 {
			t.Errorf("a second Stop returned %+v", again)
		}
	})
}

// A long run keeps at most MaxPoints periodic points, evenly spaced, and
// every mark.
func TestScraperSeriesIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		begin := time.Now()
		h := newHosts()
		p := startPipeServer(t, h.serve)
		s, err := Start(t.Context(), Config{
			Targets:   []Target{{URL: "http://ok/metrics"}},
			Interval:  time.Second,
			MaxPoints: 4,
			Client:    p.client,
			Families:  []string{"requests"},
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if err := s.Mark(t.Context(), "start"); err != nil {
			t.Fatal(err)
		}
		// Ticks at 1 to 20 s: periodic scrapes 0 to 19. Thinned when they
		// reach 4 points: at scrape 3 (kept 0, 2; stride 2), at 6 (0, 4;
		// stride 4), at 12 (0, 8; stride 8); then 16 is kept.
		time.Sleep(20 * time.Second)
		synctest.Wait()
		results := s.Stop()
		r := results[0]
		if r.Stride != 8 {
			t.Errorf("stride %d, want 8", r.Stride)
		}
		var periodic []time.Time
		marks := 0
		for _, p := range r.Series {
			if p.Time.Equal(begin.Add(500 * time.Millisecond)) {
				marks++
				continue
			}
			periodic = append(periodic, p.Time)
		}
		want := []time.Time{begin.Add(time.Second), begin.Add(9 * time.Second), begin.Add(17 * time.Second)}
		if marks != 1 || len(periodic) != len(want) {
			t.Fatalf("%d marks and periodic points at %v, want 1 mark and %v", marks, periodic, want)
		}
		for i := range want {
			if !periodic[i].Equal(want[i]) {
				t.Errorf("periodic points at %v, want %v", periodic, want)
				break
			}
		}
		if r.Scrapes != 21 {
			t.Errorf("%d scrapes, want 21 (20 periodic and the mark)", r.Scrapes)
		}
	})
}

func TestScraperRefusesBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "scheme", cfg: Config{Targets: []Target{{URL: "http://a/metrics"}, {URL: "ftp://host/metrics"}}}, want: `server metrics target 2: invalid URL "ftp://host/metrics": the scheme must be http or https`},
		{name: "no host", cfg: Config{Targets: []Target{{URL: "http:///metrics"}}}, want: "server metrics target 1: invalid URL \"http:///metrics\": it has no host"},
		{name: "credentials are not shown", cfg: Config{Targets: []Target{{URL: "gopher://u:secret@host/"}}}, want: `"gopher://u:xxxxx@host/"`},
		{name: "negative interval", cfg: Config{Interval: -time.Second}, want: "cannot be negative"},
		{name: "too few points", cfg: Config{MaxPoints: 3}, want: "at least 4 points, not 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(t.Context(), tt.cfg)
			if err == nil {
				s.Stop()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestSeriesPoint(t *testing.T) {
	exposition := string(vllmText(t))
	tests := []struct {
		name     string
		families []string
		kept     int      // how many families are kept
		want     []string // families kept
		dropped  []string // families left out
	}{
		{name: "counters and gauges by default (23 of 37, the 14 histograms left out)", kept: 23, want: []string{"vllm:num_requests_running", "vllm:prompt_tokens_total", "python_info"}, dropped: []string{"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds"}},
		{name: "the families named", kept: 2, families: []string{"vllm:time_to_first_token_seconds", "vllm:num_requests_waiting", "vllm:absent"}, want: []string{"vllm:time_to_first_token_seconds", "vllm:num_requests_waiting"}, dropped: []string{"vllm:num_requests_running", "vllm:absent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var shared interner
			first := shared.point(parseText(t, exposition, at(0)), tt.families)
			second := shared.point(parseText(t, exposition, at(1)), tt.families)
			if len(first.Families) != tt.kept {
				t.Errorf("%d families kept, want %d", len(first.Families), tt.kept)
			}
			for _, name := range tt.want {
				a, b := first.Families[name], second.Families[name]
				if a == nil {
					t.Fatalf("%s was not kept", name)
				}
				if a.Help != nil {
					t.Errorf("%s keeps its help text", name)
				}
				if len(a.GetMetric()[0].GetLabel()) > 0 && &a.GetMetric()[0].GetLabel()[0] != &b.GetMetric()[0].GetLabel()[0] {
					t.Errorf("%s: the two points hold their label sets twice", name)
				}
			}
			for _, name := range tt.dropped {
				if first.Families[name] != nil {
					t.Errorf("%s was kept", name)
				}
			}
			for _, sel := range []Selector{{Name: "vllm:num_requests_waiting"}, {Name: "vllm:request_success_total", Labels: map[string]string{"finished_reason": "stop"}}} {
				full, _ := Sum(parseText(t, exposition, at(0)), sel)
				if got, ok := Sum(first, sel); ok && got != full {
					t.Errorf("%v: the point says %v, the exposition %v", sel, got, full)
				}
			}
			if h, ok := HistogramDelta(first, second, Selector{Name: "vllm:time_to_first_token_seconds"}); ok != slices.Contains(tt.want, "vllm:time_to_first_token_seconds") || (ok && h.Count != 0) {
				t.Errorf("TTFT between two equal points: %+v, %v", h, ok)
			}
		})
	}
}

// Over real sockets on 127.0.0.1, a good target's window figures come out
// whole beside targets that refuse, fail, answer garbage or too much,
// each failure counted under its kind.
func TestScraperMarksOverRealSockets(t *testing.T) {
	var served atomic.Int64
	good := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write([]byte("# TYPE vllm:request_success_total counter\nvllm:request_success_total{engine=\"0\"} " + strconv.FormatInt(100*n, 10) + "\n" +
			bucketText(`engine="0"`, [5]int{int(10 * n), int(30 * n), int(90 * n), int(100 * n), int(100 * n)}, strconv.FormatInt(31*n, 10))))
	})
	bad := []struct {
		url  string
		kind Kind
	}{
		{refused.URL(t) + "/metrics", KindRefused},
		{serve(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusServiceUnavailable) }), KindStatus},
		{serve(t, text([]byte("garbage {{{\n"))), KindMalformed},
		{serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(50<<20))
		}), KindTooLarge},
	}
	targets := []Target{{URL: good}}
	for _, b := range bad {
		targets = append(targets, Target{URL: b.url})
	}
	s, err := Start(t.Context(), Config{Targets: targets, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Mark(t.Context(), "start"); err == nil {
		t.Error("the failing targets' mark did not fail")
	}
	if err := s.Mark(t.Context(), "end"); err == nil {
		t.Error("the failing targets' mark did not fail")
	}
	results := s.Stop()
	from, ok1 := results[0].Mark("start")
	to, ok2 := results[0].Mark("end")
	if !ok1 || !ok2 {
		t.Fatalf("the good target's marks: %+v", results[0].Marks)
	}
	if got, ok := CounterDelta(from, to, Selector{Name: "vllm:request_success_total"}); !ok || got != 100 {
		t.Errorf("requests in the window %v (%v), want 100", got, ok)
	}
	h, _ := HistogramDelta(from, to, Selector{Name: "vllm:request_queue_time_seconds"})
	if p50, ok := h.Quantile(0.5); !ok || math.Abs(p50-0.3) > 1e-12 {
		t.Errorf("queue p50 %v (%v), want 0.3", p50, ok)
	}
	if results[0].Scrapes != 2 || len(results[0].Failures) != 0 {
		t.Errorf("good target: %+v", results[0].Counts)
	}
	for i, b := range bad {
		r := results[i+1]
		if r.Failures[b.kind] != 2 || len(r.Failures) != 1 || r.Scrapes != 0 || len(r.Series) != 0 {
			t.Errorf("%s: %+v, want 2 failures of kind %s", b.url, r.Counts, b.kind)
		}
		if _, ok := r.Mark("start"); ok || r.LastError == nil || r.LastError.Kind != b.kind {
			t.Errorf("%s: a start snapshot, or last error %v", b.url, r.LastError)
		}
	}
}

// While the Scraper reads on, Latest is each target's last snapshot that
// answered, the failure of its last scrape (nil once one answers again)
// and the snapshot of the mark asked for; it does not wait for a scrape
// under way.
func TestScraperLatest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHosts()
		p := startPipeServer(t, h.serve)
		s, err := Start(t.Context(), Config{
			Targets:  []Target{{URL: "http://ok/metrics"}, {URL: "http://hang/metrics"}},
			Interval: time.Hour,
			Timeout:  2 * time.Second,
			Client:   p.client,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		for _, l := range s.Latest("start") {
			if !l.Snapshot.Time.IsZero() || l.Failed != nil || l.MarkOK {
				t.Errorf("%s before any scrape: %+v", l.Target.URL, l)
			}
		}
		s.Mark(t.Context(), "start")
		ok, hung := s.Latest("start")[0], s.Latest("start")[1]
		if v, _ := Sum(ok.Snapshot, Selector{Name: "requests"}); v != 1 || ok.Failed != nil || !ok.MarkOK {
			t.Errorf("the answering target after the start mark: requests %v, %+v", v, ok)
		}
		if hung.Failed == nil || hung.Failed.Kind != KindTimeout || !hung.Snapshot.Time.IsZero() || hung.MarkOK {
			t.Errorf("the hanging target after the start mark: %+v, want its timeout and no snapshot", hung)
		}
		// A mark under way, held by the hanging target: Latest answers
		// at once.
		marked := make(chan struct{})
		go func() {
			s.Mark(t.Context(), "end")
			close(marked)
		}()
		synctest.Wait()
		if got := s.Latest("start")[0]; got.Snapshot.Time.IsZero() {
			t.Errorf("Latest while a mark waits: %+v", got)
		}
		close(h.release)
		<-marked
		ok, hung = s.Latest("start")[0], s.Latest("start")[1]
		if v, _ := Sum(ok.Snapshot, Selector{Name: "requests"}); v != 2 {
			t.Errorf("the answering target after the end mark: requests %v, want its second snapshot", v)
		}
		if v, _ := Sum(ok.Mark, Selector{Name: "requests"}); v != 1 {
			t.Errorf("the answering target's start mark: requests %v, want 1", v)
		}
		if hung.Failed != nil || hung.Snapshot.Time.IsZero() {
			t.Errorf("the once hanging target answered: %+v, want its snapshot and no failure", hung)
		}
	})
}
