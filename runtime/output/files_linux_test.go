package output_test

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/llmrun/llmrun/runtime/output"
)

// A terminal is a device a result file may be written to: what is
// written there is shown, not refused.
func TestCheckPathTakesATerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("naming the pseudo-terminal: %v", err)
	}
	tty := fmt.Sprintf("/dev/pts/%d", n)
	if err := output.CheckPath(tty); err != nil {
		t.Errorf("CheckPath(%s): %v", tty, err)
	}
}
