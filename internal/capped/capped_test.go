package capped

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.txt")
	if err := os.WriteFile(small, []byte("12345"), 0o666); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(small, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadFile at the limit = %q, %v", b, err)
	}
	var tooLarge *TooLargeError
	if _, err := ReadFile(small, 4); !errors.As(err, &tooLarge) || err.Error() != small+" is larger than 4 bytes, the most llmrun reads" {
		t.Errorf("ReadFile over the limit: %v", err)
	}
	if _, err := ReadFile(dir, 1<<20); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("ReadFile of a directory: %v", err)
	}
	if _, err := ReadFile("/dev/zero", 1<<20); err == nil || err.Error() != "/dev/zero is a device, not a regular file" {
		t.Errorf("ReadFile of /dev/zero: %v", err)
	}
}

// TestReadFileEndlessPipe reads a named pipe whose writer writes more than
// the limit: the read stops one byte past it.
func TestReadFileEndlessPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		chunk := make([]byte, 64<<10)
		for range 64 { // 4 MiB at most; the reader stops at 1 MiB
			if _, err := f.Write(chunk); err != nil {
				return
			}
		}
	}()
	_, err := ReadFile(fifo, 1<<20)
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 1<<20 {
		t.Errorf("ReadFile of an endless pipe: %v", err)
	}
	<-done
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 1 << 30: "1 GiB", 512 << 10: "512 KiB", 1000: "1000 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
