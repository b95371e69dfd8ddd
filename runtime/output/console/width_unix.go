//go:build unix

package console

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// terminalWidth is the number of columns of the terminal w is, or
// defaultWidth.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return defaultWidth
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return defaultWidth
	}
	return int(ws.Col)
}
