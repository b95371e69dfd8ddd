//go:build !unix

package console

import "io"

// terminalWidth is defaultWidth: the size of a terminal is read on Unix
// systems only.
func terminalWidth(io.Writer) int { return defaultWidth }
