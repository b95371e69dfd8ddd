package packed

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestPackUnpack(t *testing.T) {
	doc := []byte(`{"version":3,"serving":{"requests":12}}` + strings.Repeat(" ", 1000))
	gz, sum, err := Pack(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(gz) >= len(doc) || len(sum) != 64 {
		t.Fatalf("packed %d bytes into %d, sum %q: want smaller, and 64 hex digits", len(doc), len(gz), sum)
	}
	got, err := Unpack(gz, sum, int64(len(doc)))
	if err != nil || !bytes.Equal(got, doc) {
		t.Fatalf("Unpack = %q, %v; want the document back", got, err)
	}
	empty, emptySum, err := Pack(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Unpack(empty, emptySum, 0); err != nil || len(got) != 0 {
		t.Errorf("an empty document unpacks to %q, %v", got, err)
	}

	altered := bytes.Clone(gz)
	altered[len(altered)/2] ^= 0xff
	otherGz, _, err := Pack([]byte("another document"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		gz      []byte
		max     int64
		wantErr string
	}{
		{"too large", gz, int64(len(doc)) - 1, "unpacks to more than"},
		{"not gzip", []byte("plain text"), 1 << 20, "does not unpack"},
		{"cut short", gz[:len(gz)/2], 1 << 20, "does not unpack"},
		{"altered", altered, 1 << 20, ""},
		{"another document", otherGz, 1 << 20, "it was altered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Unpack(tt.gz, sum, tt.max)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Unpack: %v, want an error saying %q", err, tt.wantErr)
			}
			if tt.name == "too large" && !errors.Is(err, ErrTooLarge) {
				t.Errorf("Unpack: %v, want ErrTooLarge", err)
			}
		})
	}
}

// A document is unpacked into one buffer of its size, whatever the size
// of the gzip stream: unpacking 8 MiB allocates little more than 8 MiB,
// not the buffers a growing read leaves behind.
func TestUnpackAllocatesTheDocumentOnce(t *testing.T) {
	doc := bytes.Repeat([]byte(" "), 8<<20)
	gz, sum, err := Pack(doc)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := Unpack(gz, sum, 256<<20)
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != len(doc) {
		t.Fatalf("Unpack: %d bytes, %v; want the document", len(got), err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(len(doc))*5/4 {
		t.Errorf("unpacking %d bytes allocated %d", len(doc), allocated)
	}
}

// Decode checks the whole document, what its decode read of it and what
// it left: a decode that stops early still sees the document refused
// when its checksum or its size is wrong, and is told its size when not.
func TestDecodeChecksWhatDecodeLeftUnread(t *testing.T) {
	doc := []byte(`{"serving":{"requests":12}}` + strings.Repeat(" ", 5000))
	gz, sum, err := Pack(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, otherSum, err := Pack([]byte("another document"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		sum      string
		max      int64
		wantSize int64
		wantErr  string
	}{
		{"the document", sum, int64(len(doc)), int64(len(doc)), ""},
		{"another checksum", otherSum, int64(len(doc)), int64(len(doc)), "it was altered"},
		{"larger than the bound", sum, 1000, 1001, "unpacks to more than 1000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var head []byte
			size, err := Decode(bytes.NewReader(gz), tt.sum, tt.max, func(r io.Reader) {
				head = make([]byte, 10)
				_, err := io.ReadFull(r, head)
				if err != nil {
					t.Errorf("reading the document's start: %v", err)
				}
			})
			if size != tt.wantSize || (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Decode = %d, %v; want %d and an error saying %q", size, err, tt.wantSize, tt.wantErr)
			}
			if string(head) != string(doc[:10]) {
				t.Errorf("decode read %q, want the document's start", head)
			}
		})
	}
}
