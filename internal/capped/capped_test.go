package capped

import (
	"context"
	"errors"
	"io"
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

// A reader of a stream fails one byte beyond its limit, naming the
// stream and the cap; up to the limit it reads everything.
func TestNewReader(t *testing.T) {
	for _, tt := range []struct {
		size    int
		wantErr string
	}{
		{10, ""},
		{11, "standard input is larger than 10 bytes, the most llmrun reads"},
	} {
		b, err := io.ReadAll(NewReader(strings.NewReader(strings.Repeat("x", tt.size)), "standard input", 10))
		if tt.wantErr == "" && (err != nil || len(b) != tt.size) {
			t.Errorf("%d bytes: read %d, %v; want them all", tt.size, len(b), err)
		}
		if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr || len(b) > 10) {
			t.Errorf("%d bytes: read %d, %v; want at most 10 and %q", tt.size, len(b), err, tt.wantErr)
		}
	}
}

// A budget takes reads until they pass its limit together, and then says
// which cap they passed, taking nothing.
func TestBudget(t *testing.T) {
	b := NewBudget(1<<20, "the result files one merge unpacks")
	for _, n := range []int64{600 << 10, 400 << 10} {
		if err := b.Take(n); err != nil {
			t.Fatalf("Take(%d): %v", n, err)
		}
	}
	if b.Left() != 24<<10 {
		t.Errorf("Left = %d, want %d", b.Left(), 24<<10)
	}
	err := b.Take(24<<10 + 1)
	want := "more than 1 MiB in all, the most llmrun takes of the result files one merge unpacks"
	if err == nil || err.Error() != want || b.Left() != 24<<10 {
		t.Errorf("Take beyond the budget: %v, %d left; want %q and nothing taken", err, b.Left(), want)
	}
}

// TestOpenContextNamedPipe ends the wait for a named pipe's writer, and
// a read that waits for a writer's bytes, when the context ends; a
// writer that came reads as before.
func TestOpenContextNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	opened := make(chan error, 1)
	go func() {
		f, err := OpenContext(ctx, fifo, 1<<20)
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	cancel()
	err := <-opened
	if !errors.Is(err, context.Canceled) || err.Error() != fifo+": interrupted while waiting for a writer on the named pipe: context canceled" {
		t.Errorf("no writer: %v", err)
	}

	// A writer that stays silent: the read waits, until the context ends.
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	writerIn := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
		}
		if _, err := w.Write([]byte("first")); err != nil {
			t.Error(err)
		}
		writerIn <- w
	}()
	f, err := OpenContext(ctx, fifo, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := <-writerIn
	defer w.Close()
	buf := make([]byte, 16)
	if n, err := f.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	cancel()
	if _, err := f.Read(buf); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted while reading the named pipe") {
		t.Errorf("a read the context ended: %v", err)
	}
}
