package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Append writes what encoding/json writes, with and without HTML
// escaping.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" and \\", "<a href=\"x\">&amp;</a>", "\b\f\n\r\t\x00\x1f\x7f",
		"line\u2028para\u2029", "bad \xff\xfe utf-8", "é中🎉"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if got := Append(nil, s, html); string(got) != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
				t.Errorf("Append(%q, html %v) = %s, want %s", s, html, got, want.Bytes())
			}
		}
	})
}

// Written without HTML escaping (as the JSONL lines are), every string
// reads back as itself, invalid UTF-8 replaced.
func TestAppendReadsBack(t *testing.T) {
	for _, s := range []string{
		"", "plain", `"quoted"`, `back\slash`, "new\nline\r\ttab", "\x00\x01\x1f\x7f",
		"héllo wörld ✓ 日本語 🚀", "line\u2028sep\u2029", "bad \xff\xfe utf8 \xe2\x82",
	} {
		b := Append([]byte("x"), s, false)
		if b[0] != 'x' {
			t.Fatalf("%q: prefix lost", s)
		}
		b = b[1:]
		if !json.Valid(b) {
			t.Errorf("%q: %s is not valid JSON", s, b)
			continue
		}
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if s == "bad \xff\xfe utf8 \xe2\x82" {
			want = "bad \ufffd\ufffd utf8 \ufffd\ufffd" // one per invalid byte, as encoding/json
		}
		if got != want {
			t.Errorf("%q: read back %q, want %q", s, got, want)
		}
		if bytes.ContainsAny(b, "\n\r\u2028") {
			t.Errorf("%q: %s holds a raw line break", s, b)
		}
		if m, _ := json.Marshal(s); strings.ToValidUTF8(s, "") == s && !strings.ContainsAny(s, "<>&") && string(m) != string(b) {
			t.Errorf("%q: %s, encoding/json writes %s", s, b, m)
		}
	}
}
