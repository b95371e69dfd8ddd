//go:build !(linux || darwin)

package textfmt

import "io"

// TerminalWidth is the width in columns of the terminal w writes to, or 0
// when it is unknown: always on this system.
func TerminalWidth(io.Writer) int { return 0 }
