package console

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Screen is a terminal shared by the live view and whatever else writes to
// it while a run goes (the script's console output, warnings): a write
// first erases the view's block, then the block is drawn again below what
// was written, so neither garbles the other. Without a block to show it
// passes writes through as they are. Its methods are safe for concurrent
// use.
type Screen struct {
	mu sync.Mutex
	w  io.Writer
	// block is the view's lines, drawn after every write; shown says
	// they are on the screen, the cursor at the end of the last.
	block []string
	shown bool
}

// NewScreen returns a Screen writing to w.
func NewScreen(w io.Writer) *Screen { return &Screen{w: w} }

// Write writes p above the live view's block.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	n, err := s.w.Write(p)
	s.draw()
	return n, err
}

// show replaces the block on the screen with lines; nil removes it.
func (s *Screen) show(lines []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	s.block = lines
	s.draw()
}

// erase removes the block from the screen, leaving the cursor where it
// began.
func (s *Screen) erase() {
	if !s.shown {
		return
	}
	up := ""
	if n := len(s.block) - 1; n > 0 {
		up = fmt.Sprintf("\x1b[%dA", n)
	}
	fmt.Fprintf(s.w, "\r%s\x1b[J", up)
	s.shown = false
}

// draw writes the block, the cursor left at the end of its last line.
func (s *Screen) draw() {
	if len(s.block) == 0 {
		return
	}
	fmt.Fprint(s.w, strings.Join(s.block, "\n"))
	s.shown = true
}
