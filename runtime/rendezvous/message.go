package rendezvous

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// hello is what an instance says when it arrives.
type hello struct {
	Protocol  int    `json:"protocol"`
	Instance  int    `json:"instance"`
	Instances int    `json:"instances"`
	Plan      string `json:"plan"`
}

// readiness is what an instance says once its VUs are initialised.
type readiness struct {
	Ready bool `json:"ready"`
}

// reply is instance 0's answer: the welcome (the run id alone), the start
// (the run id, and how long from the moment it was sent the start is), or
// why the rendezvous failed.
type reply struct {
	RunID string `json:"run_id,omitempty"`
	// Start is instance 0's start time in Unix nanoseconds, the same for
	// every instance.
	Start int64 `json:"start_unix_nano,omitempty"`
	// Delay is how long after this message was sent the start is, in
	// nanoseconds: what the instance waits, whatever its clock says.
	Delay int64  `json:"delay_ns,omitempty"`
	Error string `json:"error,omitempty"`
	// Protocol is instance 0's protocol, in its welcome.
	Protocol int `json:"protocol,omitempty"`
	// FiguresEvery, in the start, asks the instance to send its figures
	// every so many nanoseconds after the start; 0 asks for none.
	FiguresEvery int64 `json:"figures_every_ns,omitempty"`
}

// malformedError is a line that is not a rendezvous message: whoever sent
// it is not an llmrun instance.
type malformedError struct{ reason string }

func (e malformedError) Error() string { return e.reason }

// send writes v as one JSON line, within writeTimeout.
func send(conn net.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	_, err = conn.Write(append(b, '\n'))
	return err
}

// receive reads one JSON line of at most maxMessage bytes into v, by
// deadline.
func receive(r *bufio.Reader, conn net.Conn, deadline time.Time, v any) error {
	if err := conn.SetReadDeadline(deadline); err != nil {
		return err
	}
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return malformedError{fmt.Sprintf("a message longer than %d bytes", maxMessage)}
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(line, v); err != nil {
		return malformedError{"a malformed message: " + err.Error()}
	}
	return nil
}

// newReader reads one connection's messages.
func newReader(conn net.Conn) *bufio.Reader {
	return bufio.NewReaderSize(conn, maxMessage)
}
