package vllmbench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// TextSpill holds the benchmark's generated texts for --save-detailed in
// a file, not in memory: each request's text is written, as its JSON
// string, when the request ends, and the result file's generated_texts
// are copied from it at the end. Memory then holds two numbers per
// request, whatever the length of its answer.
type TextSpill struct {
	mu   sync.Mutex
	f    *os.File
	size int64
	// err is the first write that failed: the texts are then lost, and
	// the result that needs them says so.
	err error
}

// textRef is where a request's text lies in a TextSpill: n bytes from
// off, its JSON string (never empty: "" is two bytes); n is 0 for a text
// not spilled.
type textRef struct{ off, n int64 }

// NewTextSpill creates a TextSpill's file in dir, which it removes at
// once: the file lives as long as the TextSpill is open (Close), and no
// crash leaves it behind.
func NewTextSpill(dir string) (*TextSpill, error) {
	f, err := os.CreateTemp(dir, ".llmrun-bench-texts-*")
	if err != nil {
		return nil, fmt.Errorf("--save-detailed: a file for the generated texts beside the result: %w", err)
	}
	os.Remove(f.Name())
	return &TextSpill{f: f}, nil
}

// add writes text, as a JSON string, at the file's end.
func (s *TextSpill) add(text string) textRef {
	b, _ := json.Marshal(text) // a string always encodes
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return textRef{}
	}
	if _, err := s.f.Write(b); err != nil {
		s.err = fmt.Errorf("--save-detailed: writing the generated texts beside the result: %w", err)
		return textRef{}
	}
	ref := textRef{off: s.size, n: int64(len(b))}
	s.size += ref.n
	return ref
}

// copyTo copies the JSON string of ref to w.
func (s *TextSpill) copyTo(w io.Writer, ref textRef) error {
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, io.NewSectionReader(s.f, ref.off, ref.n)); err != nil {
		return fmt.Errorf("--save-detailed: copying the generated texts into the result: %w", err)
	}
	return nil
}

// Close closes and removes the file.
func (s *TextSpill) Close() error {
	err := s.f.Close()
	os.Remove(s.f.Name())
	return err
}

// spilledTexts are the generated_texts of a result, in its requests'
// order, read from their TextSpill as the result is written.
type spilledTexts struct {
	spill *TextSpill
	refs  []textRef
}
