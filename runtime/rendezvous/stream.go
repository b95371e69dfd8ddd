package rendezvous

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Bounds of the figures sent after the start.
const (
	// MaxFigures caps one message of figures in bytes: a longer one ends
	// its connection, and instance 0 names the instance lost.
	MaxFigures = 256 << 10
	// MaxFiguresEvery bounds the period of the figures: instance 0 asks
	// for no longer one, an instance accepts none from its start.
	MaxFiguresEvery = time.Hour
	// minSilence is the shortest silence after which instance 0 names an
	// instance lost: an instance sends its figures every period, so a
	// longer silence is a process or a network that stopped.
	minSilence = 30 * time.Second
	// figuresSlack is how many messages beyond twice the asked rate an
	// instance may have sent at any time since the start: the first,
	// the last (sent when its run ends, between two periods) and a
	// margin. A faster one is a loop, not a period, and is named lost
	// before it takes instance 0's CPU from its own load.
	figuresSlack = 4
)

// Receiver takes, on instance 0, what the other instances send after the
// start when Config.Figures asks for it. Its methods are called from each
// instance's own goroutine, so one instance's figures never wait for
// another's; they must not block for long.
type Receiver interface {
	// Received takes one message of instance's figures, which is valid
	// only during the call. An error says the message is not figures:
	// the connection ends and the instance is named lost with it.
	Received(instance int, msg []byte) error
	// Lost says that instance's connection ended (it hung up, went
	// silent, or sent what Received refused), after its last message;
	// why says how, in words. It is not called once the meeting closes.
	Lost(instance int, why string)
}

// Sender is an instance's side of the figures after the start: what it
// sends instance 0 every Every.
type Sender struct {
	// Every is how often instance 0 asked for figures.
	Every    time.Duration
	instance int
	conn     net.Conn
	close    func()
}

// Send writes one message of figures, which holds no newline and is at
// most MaxFigures bytes, within a write timeout: a stalled instance 0
// cannot hold the caller for longer.
func (s *Sender) Send(msg []byte) error {
	if len(msg) > MaxFigures {
		return fmt.Errorf("rendezvous: instance %d: figures of %d bytes: at most %d", s.instance, len(msg), MaxFigures)
	}
	err := s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err == nil {
		_, err = s.conn.Write(append(msg[:len(msg):len(msg)], '\n'))
	}
	if err != nil {
		return fmt.Errorf("rendezvous: instance %d: sending figures to instance 0: %w", s.instance, err)
	}
	return nil
}

// Close hangs up: instance 0 sees the connection end.
func (s *Sender) Close() { s.close() }

// readLine reads one line of at most limit() bytes, its newline
// included, valid until the next read. limit is asked again each time the
// line outgrows what was read, so that it may grow while the line is read
// (an instance's connection becomes one of figures at the start).
func readLine(r *bufio.Reader, limit func() int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if most := limit(); len(line)+len(chunk) > most+1 {
			return nil, malformedError{fmt.Sprintf("a message longer than %d bytes", most)}
		}
		if err == nil && line == nil {
			return chunk, nil
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// figuresLimit bounds a line of figures.
func figuresLimit() int { return MaxFigures }

// streamed says whether conn is an instance's connection kept after the
// start for its figures, and which instance's.
func (c *coordinator) streamed(conn net.Conn) (int, bool) {
	select {
	case <-c.started:
		i, ok := c.kept[conn]
		return i, ok
	default:
		return 0, false
	}
}

// stream hands instance i's figures to the receiver, from line (read
// with err) on, until its connection ends.
//
// An instance sends one message every FiguresEvery from its start, which
// follows instance 0's sending it: by any time, at most one a period
// since then and its last. Those read past twice that, and figuresSlack,
// are a loop: the instance is named lost. A stall of instance 0 only
// delays the reading, which leaves more time, so that it never trips
// this.
func (c *coordinator) stream(i int, conn net.Conn, r *bufio.Reader, line []byte, err error) {
	silence := c.silence()
	var n int64
	for err == nil {
		if n++; n > figuresSlack+2*int64(time.Since(c.startedAt)/c.cfg.FiguresEvery) {
			conn.Close()
			c.lost(i, fmt.Sprintf("sent figures faster than every %v, which instance 0 asked for", c.cfg.FiguresEvery))
			return
		}
		if rerr := c.cfg.Figures.Received(i, line); rerr != nil {
			conn.Close()
			c.lost(i, "sent what is not figures: "+rerr.Error())
			return
		}
		if err = conn.SetReadDeadline(time.Now().Add(silence)); err == nil {
			line, err = readLine(r, figuresLimit)
		}
	}
	conn.Close()
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF):
		c.lost(i, "connection closed")
	case errors.As(err, &ne) && ne.Timeout():
		c.lost(i, fmt.Sprintf("nothing heard for %v", silence))
	default:
		c.lost(i, err.Error())
	}
}

// lost tells the receiver instance i is lost, unless instance 0 itself
// hung up.
func (c *coordinator) lost(i int, why string) {
	select {
	case <-c.hungUp:
	default:
		c.cfg.Figures.Lost(i, why)
	}
}

// hangUp closes the connections kept for figures and waits for their
// readers.
func (c *coordinator) hangUp() {
	c.hangUpOnce.Do(func() {
		close(c.hungUp)
		for conn := range c.kept {
			conn.Close()
		}
	})
	c.readers.Wait()
}

// keepFigures keeps the arrived instances' connections for their figures
// after the start, when instance 0 asks for figures; it is called just
// before the start, at start, is sent. Each must send its first line
// within the silence after the start, as each later one after the last:
// one that sends none is named lost then, not held until the run ends.
func (c *coordinator) keepFigures(start time.Time) {
	if c.cfg.Figures == nil {
		return
	}
	c.kept = make(map[net.Conn]int, len(c.arrived))
	for i, conn := range c.arrived {
		c.kept[conn] = i
		conn.SetReadDeadline(start.Add(c.silence()))
	}
	c.startedAt = time.Now()
	close(c.started)
}

// silence is how long instance 0 waits for an instance's next line of
// figures before it names it lost.
func (c *coordinator) silence() time.Duration { return max(minSilence, 10*c.cfg.FiguresEvery) }

// figuresCloser is an instance's hang-up once, shared by its meeting and
// its Sender.
type figuresCloser struct {
	once sync.Once
	conn net.Conn
}

func (f *figuresCloser) close() { f.once.Do(func() { f.conn.Close() }) }
