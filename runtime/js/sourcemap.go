package js

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// sourceMap is an esbuild source map, the fields llmrun reads.
type sourceMap struct {
	Version        int               `json:"version"`
	Sources        []string          `json:"sources"`
	SourcesContent []string          `json:"sourcesContent,omitempty"`
	Names          []json.RawMessage `json:"names"`
	Mappings       string            `json:"mappings"`
}

// gojaSourceMap returns the source map to give goja: m without the sources'
// content and with columns counted from 1. goja looks positions up with
// columns from 1 but source maps count them from 0, which would map a
// position to the token after it wherever two tokens are one column apart,
// and report columns one short.
func gojaSourceMap(m sourceMap) ([]byte, error) {
	mappings, err := oneBasedColumns(m.Mappings)
	if err != nil {
		return nil, fmt.Errorf("reading esbuild's source map: %w", err)
	}
	m.SourcesContent = nil
	m.Mappings = mappings
	return json.Marshal(m)
}

// oneBasedColumns adds 1 to every generated and original column of a
// source map's mappings. Both are stored as differences from the previous
// value, so only the first generated column of each line (the difference
// from 0) and the first original column of all changes.
func oneBasedColumns(mappings string) (string, error) {
	var b strings.Builder
	b.Grow(len(mappings) + len(mappings)/8)
	shiftedSource := false
	for i, line := range strings.Split(mappings, ";") {
		if i > 0 {
			b.WriteByte(';')
		}
		for j, seg := range strings.Split(line, ",") {
			if j > 0 {
				b.WriteByte(',')
			}
			if seg == "" || (j > 0 && shiftedSource) {
				b.WriteString(seg)
				continue
			}
			fields, err := decodeSegment(seg)
			if err != nil {
				return "", fmt.Errorf("line %d of the mappings: %w", i+1, err)
			}
			if j == 0 {
				fields[0]++
			}
			if !shiftedSource && len(fields) >= 4 {
				fields[3]++
				shiftedSource = true
			}
			for _, f := range fields {
				writeVLQ(&b, f)
			}
		}
	}
	return b.String(), nil
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// decodeSegment decodes the base64 VLQ fields of a mapping segment.
func decodeSegment(seg string) ([]int, error) {
	var fields []int
	value, shift := 0, 0
	for i := 0; i < len(seg); i++ {
		digit := strings.IndexByte(base64Digits, seg[i])
		if digit < 0 {
			return nil, fmt.Errorf("invalid character %q in segment %q", seg[i], seg)
		}
		value |= (digit & 31) << shift
		if digit&32 != 0 {
			shift += 5
			continue
		}
		if value&1 != 0 {
			fields = append(fields, -(value >> 1))
		} else {
			fields = append(fields, value>>1)
		}
		value, shift = 0, 0
	}
	if shift != 0 {
		return nil, fmt.Errorf("segment %q ends inside a value", seg)
	}
	if len(fields) == 0 {
		return nil, errors.New("empty segment")
	}
	return fields, nil
}

// writeVLQ writes v as a base64 VLQ.
func writeVLQ(b *strings.Builder, v int) {
	u := v << 1
	if v < 0 {
		u = -v<<1 | 1
	}
	for {
		digit := u & 31
		u >>= 5
		if u > 0 {
			digit |= 32
		}
		b.WriteByte(base64Digits[digit])
		if u == 0 {
			return
		}
	}
}
