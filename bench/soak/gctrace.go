package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// gcLine matches a line of the Go runtime's GODEBUG=gctrace=1 output:
// "gc 12 @3.456s 2%: ... ms cpu, 40->42->21 MB, 44 MB goal, ...". The
// third heap size is the live heap the collection marked.
var gcLine = regexp.MustCompile(`^gc \d+ @([0-9.]+)s .* \d+->\d+->(\d+) MB, `)

// parseGCLine returns the time since the process started and the live
// heap, in MiB, of a gctrace line; false for any other line.
func parseGCLine(line string) (point, bool) {
	m := gcLine.FindStringSubmatch(line)
	if m == nil {
		return point{}, false
	}
	secs, err1 := strconv.ParseFloat(m[1], 64)
	live, err2 := strconv.ParseFloat(m[2], 64)
	if err1 != nil || err2 != nil {
		return point{}, false
	}
	return point{time.Duration(secs * float64(time.Second)), live}, true
}

// gcTrace collects the live heap after each garbage collection from the
// client's stderr as it grows.
type gcTrace struct {
	path    string
	off     int64
	partial []byte // the last line read, not yet ended
	live    []point
}

// update parses the lines appended to the file since the last call.
func (g *gcTrace) update() error {
	f, err := os.Open(g.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(g.off, io.SeekStart); err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	g.off += int64(len(b))
	g.partial = append(g.partial, b...)
	for {
		i := bytes.IndexByte(g.partial, '\n')
		if i < 0 {
			break
		}
		if p, ok := parseGCLine(string(g.partial[:i])); ok {
			g.live = append(g.live, p)
		}
		g.partial = g.partial[i+1:]
	}
	g.partial = bytes.Clone(g.partial)
	return err
}

// last returns the live heap after the latest collection, in MiB; false
// before the first.
func (g *gcTrace) last() (float64, bool) {
	if len(g.live) == 0 {
		return 0, false
	}
	return g.live[len(g.live)-1].v, true
}

// withGCTrace returns env with gctrace turned on in GODEBUG.
func withGCTrace(env []string) []string {
	godebug := "gctrace=1"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok && v != "" {
			godebug = v + ",gctrace=1"
		}
	}
	return append(env, "GODEBUG="+godebug)
}
