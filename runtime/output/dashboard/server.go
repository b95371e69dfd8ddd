package dashboard

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultAddr is where the dashboard listens unless told: k6's port, on
// the loopback interface only.
const DefaultAddr = "127.0.0.1:5665"

// DefaultPeriod is how often the page gets an event unless told.
const DefaultPeriod = time.Second

//go:embed page.html
var assets embed.FS

// Bounds of the dashboard's server against a client that misbehaves.
const (
	// pageWriteTimeout is how long a page may take an event (or the
	// page itself, with its history) before it is cut off, its place
	// freed for another.
	pageWriteTimeout = 10 * time.Second
	// idleTimeout is how long a connection is kept between requests.
	idleTimeout = 5 * time.Second
	// maxHeaderBytes bounds a request's headers: a browser's are a few
	// hundred bytes.
	maxHeaderBytes = 16 << 10
)

// historyMark is where the page's HTML takes the events so far, so that
// it draws them on load, before the stream connects.
var historyMark = []byte("/*HISTORY*/[]")

// Config is a dashboard's: where it listens, how often it sends an
// event, and how long it serves once the run is over.
type Config struct {
	Addr   string
	Period time.Duration
	Linger time.Duration
	// Record, when set, is the file the events are recorded to
	// (--dashboard-record); with no Addr the dashboard only records.
	Record string
	// Export, when set, is the file the run's report is written to when
	// it ends (--dashboard-export), with or without Addr.
	Export string
	// Open, when set, opens the page in the user's browser once it is
	// served (--dashboard-open): with the command Browser ($BROWSER) when
	// set, else the system's (OpenBrowser).
	Open    bool
	Browser string
}

// Dashboard serves the page and the events of one run.
type Dashboard struct {
	cfg       Config
	collector *Collector
	hub       *hub
	listener  net.Listener
	server    *http.Server
	page      []byte
	stopTick  context.CancelFunc
	ticking   sync.WaitGroup
	served    chan struct{}
	recorder  *Recorder
	// recordWarning says, once stopped, why the recording lacks events.
	recordWarning string
	// report gathers the run for its export; nil without one.
	report *Report
	// exportWarning says, once stopped, why the report was not written.
	exportWarning string
	// pageWriteTimeout is the package's, shorter in tests.
	pageWriteTimeout time.Duration
	// end is why the run ended before its plan did, for the last event.
	end string
}

// Listen opens the dashboard's address and its recording's file, so
// that one in use or not writable fails before the run starts. The
// dashboard serves nothing until Start.
func Listen(cfg Config) (*Dashboard, error) {
	if cfg.Addr == "" && cfg.Record == "" && cfg.Export == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Period <= 0 {
		return nil, fmt.Errorf("dashboard: the period must be positive, got %s", cfg.Period)
	}
	page, err := assets.ReadFile("page.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: reading its page: %w", err)
	}
	d := &Dashboard{cfg: cfg, hub: newHub(), page: page, served: make(chan struct{}), pageWriteTimeout: pageWriteTimeout}
	if cfg.Export != "" {
		if err := checkExport(cfg); err != nil {
			return nil, err
		}
		d.report = NewReport()
	}
	if cfg.Record != "" {
		if d.recorder, err = CreateRecorder(cfg.Record, 0); err != nil {
			return nil, err
		}
	}
	if cfg.Addr == "" {
		close(d.served)
		return d, nil
	}
	if d.listener, err = net.Listen("tcp", cfg.Addr); err != nil {
		if d.recorder != nil {
			d.recorder.Close()
		}
		return nil, fmt.Errorf("dashboard: listening on %s: %w (give another HOST:PORT; port 0 picks a free one)", cfg.Addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.servePage)
	mux.HandleFunc("GET /events", d.serveEvents)
	d.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
	return d, nil
}

// URL is the page's address, its port the one chosen for port 0; empty
// for a dashboard that only records.
func (d *Dashboard) URL() string {
	if d.listener == nil {
		return ""
	}
	return "http://" + d.listener.Addr().String() + "/"
}

// ExposureWarning is the warning for a dashboard served on addr, given
// by flag: "" on a loopback address, else that anyone who reaches the
// host can read the run's figures, and how to keep them to this host.
func ExposureWarning(flag, addr string) string {
	if Loopback(addr) {
		return ""
	}
	return flag + " " + addr + ": listening beyond this host's loopback interface: anyone who reaches it can read the run's figures (give 127.0.0.1:PORT to keep them to this host)"
}

// Loopback says whether the address is the host's own only; a dashboard
// on another one can be read by anyone who reaches the host.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Start serves the page and sends an event of collector's every period
// until Stop.
func (d *Dashboard) Start(collector *Collector) {
	d.collector = collector
	if d.listener != nil {
		go func() {
			d.server.Serve(d.listener)
			close(d.served)
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.stopTick = cancel
	d.ticking.Add(1)
	go func() {
		defer d.ticking.Done()
		t := time.NewTicker(d.cfg.Period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				d.send(d.collector.Next(now))
			}
		}
	}()
}

// send publishes and records ev; an event that cannot be encoded is
// left out.
func (d *Dashboard) send(ev Event) {
	b, err := encodeEvent(ev)
	if err != nil {
		return
	}
	d.hub.publish(b)
	if d.recorder != nil {
		d.recorder.Record(b)
	}
	if d.report != nil {
		d.report.add(ev, len(b))
	}
}

// End has the run's last event say why the run ended before its plan
// did: interrupted, aborted by a threshold, its script failed. Call it
// before Stop.
func (d *Dashboard) End(why string) { d.end = why }

// Stop sends the run's last event, marked done, then serves the page
// for the linger or until ctx is cancelled, and shuts the server down.
func (d *Dashboard) Stop(ctx context.Context) {
	if d.stopTick == nil {
		d.closeRecording()
		if d.listener != nil {
			d.listener.Close()
		}
		return
	}
	d.stopTick()
	d.ticking.Wait()
	last := d.collector.Last(time.Now())
	last.End = d.end
	d.send(last)
	d.closeRecording()
	d.writeExport()
	if d.listener == nil {
		return
	}
	if d.cfg.Linger > 0 {
		t := time.NewTimer(d.cfg.Linger)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	d.shutdown()
}

// shutdown tells the pages no event follows and stops the server.
func (d *Dashboard) shutdown() {
	d.hub.close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.server.Shutdown(shutdown); err != nil {
		d.server.Close()
	}
	<-d.served
}

// Replay serves recorded events as the run sent them: each at its time
// since the run started divided by speed, a page that connects late
// getting those so far first. A speed of 0 sends them all at once, before
// the first page is served, so that every page holds the whole run. Once
// all are sent it serves them until ctx is cancelled. The dashboard must
// listen on an address and not be started.
func (d *Dashboard) Replay(ctx context.Context, events []Event, speed float64) {
	if speed == 0 {
		// A page asked for meanwhile waits in the listener's backlog.
		pace(ctx, events, 0, d.send)
		events = nil
	}
	go func() {
		d.server.Serve(d.listener)
		close(d.served)
	}()
	pace(ctx, events, speed, d.send)
	<-ctx.Done()
	d.shutdown()
}

// pace hands each event to send at its time since the start divided by
// speed (all at once for a speed of 0), until ctx is cancelled.
func pace(ctx context.Context, events []Event, speed float64, send func(Event)) {
	start := time.Now()
	for _, ev := range events {
		if speed > 0 {
			t := time.NewTimer(time.Until(start.Add(time.Duration(ev.Elapsed / speed * float64(time.Second)))))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		send(ev)
	}
}

// closeRecording flushes and closes the recording, keeping why it lacks
// events, if it does, for RecordWarning.
func (d *Dashboard) closeRecording() {
	if d.recorder == nil {
		return
	}
	warning, err := d.recorder.Close()
	if err != nil {
		warning = err.Error()
	}
	d.recordWarning, d.recorder = warning, nil
}

// RecordWarning says, once stopped, why the recording lacks events (its
// size limit, a failed write); empty when it holds them all.
func (d *Dashboard) RecordWarning() string { return d.recordWarning }

// servePage serves the page with the events so far in it, written
// piece by piece rather than copied into one page for each request; each
// piece has pageWriteTimeout to be taken.
func (d *Dashboard) servePage(w http.ResponseWriter, _ *http.Request) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(d.pageWriteTimeout))
	before, after, _ := bytes.Cut(d.page, historyMark)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(before)
	w.Write([]byte("["))
	for i, b := range d.hub.historySoFar() {
		if i > 0 {
			w.Write([]byte(","))
		}
		rc.SetWriteDeadline(time.Now().Add(d.pageWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return
		}
	}
	w.Write([]byte("]"))
	w.Write(after)
}

// serveEvents streams the events: the history, then each new one, and an
// event "dropped" with the count whenever this client lost some.
//
// Each write has pageWriteTimeout to be taken: a page that stopped
// reading is cut off then, its place freed.
func (d *Dashboard) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(d.pageWriteTimeout))
	c, history := d.hub.join(func(t time.Time) { rc.SetWriteDeadline(t) })
	if c == nil {
		http.Error(w, "too many dashboard pages open, or the run is over", http.StatusServiceUnavailable)
		return
	}
	defer d.hub.leave(c)
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	for _, b := range history {
		c.writeDeadline(d.pageWriteTimeout)
		if _, err := w.Write(sseEvent("", b)); err != nil {
			return
		}
	}
	flusher.Flush()
	var told int64
	write := func(b []byte) bool {
		c.writeDeadline(d.pageWriteTimeout)
		if _, err := w.Write(sseEvent("", b)); err != nil {
			return false
		}
		if n := d.hub.droppedFor(c); n != told {
			told = n
			if _, err := w.Write(sseEvent("dropped", strconv.AppendInt(nil, n, 10))); err != nil {
				return false
			}
		}
		flusher.Flush()
		return true
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case b := <-c.events:
			if !write(b) {
				return
			}
		case <-c.done:
			for {
				select {
				case b := <-c.events:
					if !write(b) {
						return
					}
				default:
					return
				}
			}
		}
	}
}
