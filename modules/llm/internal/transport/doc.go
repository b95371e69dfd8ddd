// Package transport is the llm client's transport, beneath its
// protocols and results: the HTTP/1.1 round tripper that does a
// request's I/O on the caller's goroutine (H1), the kernel receive times
// of what a connection delivered (ReceiveClock, DialWithReceiveTimes),
// the first bytes a plain-text connection kept (DialKeepingHead), the
// tracer of a request's connection phases (Tracer, Phases) and the
// watchdog that ends an attempt at its timeouts (Watchdog, whose causes
// are TimeoutError and IdleTimeoutError).
//
// It knows nothing of llm's requests, protocols or Result: package llm
// builds its client on it, converts Phases into its Timings, classifies
// its errors and times tokens by its ReceiveClock. The retry stays in
// llm, since it decides on a Result.
package transport
