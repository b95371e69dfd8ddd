//go:build linux || darwin

package textfmt

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// TerminalWidth is the width in columns of the terminal w writes to, or 0
// when w is not a terminal (a file, a pipe, a buffer) or says no width.
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
