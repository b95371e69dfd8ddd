package transport

import (
	"testing"
	"time"
)

// TestH1ProbeSeesCloseWithoutAllocating checks the look into an idle
// connection that every reuse makes, on a connection under a wrapper as
// clients dial them: open while the server keeps it, closed once the
// server closed it, and allocating nothing either way.
func TestH1ProbeSeesCloseWithoutAllocating(t *testing.T) {
	client, server := loopbackPair(t)
	pc := newH1Conn(client)
	if pc.probe.peerClosed() {
		t.Fatal("an open connection looks closed")
	}
	if n := testing.AllocsPerRun(100, func() { pc.probe.peerClosed() }); n != 0 {
		t.Errorf("a look allocates %v times, want 0", n)
	}
	server.Close()
	waitUntil(t, "the probe to see the server's close", pc.probe.peerClosed)
}

// waitUntil polls cond until it holds, failing t after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		<-tick.C
	}
}
