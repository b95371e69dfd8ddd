package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodeBody writes what encoding/json writes, byte for byte, and fails
// where it fails, with its error.
func TestEncodeBodyIsJSONMarshal(t *testing.T) {
	t.Parallel()
	var every strings.Builder
	for c := range 256 {
		every.WriteByte(byte(c))
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	deep := map[string]any{"v": 1.0}
	for range maxBodyDepth + 5 {
		deep = map[string]any{"d": deep}
	}
	bodies := []map[string]any{
		{},
		{"messages": []any{map[string]any{"role": "user", "content": "hello there"}}, "max_tokens": int64(10), "ignore_eos": true, "stream": true,
			"stream_options": map[string]any{"include_usage": true}, "model": "m", "temperature": 0.0},
		{"every byte": every.String(), "html": "<a href='x'>&amp;</a>", "separators": "a\u2028b\u2029c", "invalid": "\xff\xfe ok \xc3",
			"unicode": "héllo 世界 🎉", "controls": "\b\f\n\r\t\x00\x1f\x7f"},
		{"numbers": []any{0.0, math.Copysign(0, -1), 1.0, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.5e300, 5e-324, math.MaxFloat64,
			123456789.125, int64(math.MaxInt64), int64(math.MinInt64), 7, -3}},
		{"null": nil, "nils": []any{nil, map[string]any(nil), []any(nil)}, "empty": []any{}, "nested": map[string]any{"b": map[string]any{"z": 1.0, "a": []any{"x"}}}},
		{"sorted": map[string]any{"b": 1.0, "a": 2.0, "B": 3.0, "ä": 4.0, "": 5.0, "aa": 6.0, "a\u2028": 7.0}},
		{"other type": map[string]string{"k": "v"}, "raw": json.RawMessage(`{"x": 1}`)},
		{"nan": math.NaN()},
		{"inf": []any{1.0, math.Inf(-1)}},
		{"cycle": cyclic},
		{"deep": deep},
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, rnd.IntN(40))
		for i := range b {
			b[i] = byte(rnd.IntN(256))
		}
		r := make([]rune, rnd.IntN(10))
		for i := range r {
			r[i] = rune(rnd.IntN(utf8.MaxRune + 1))
		}
		bodies = append(bodies, map[string]any{string(b): string(r), "f": math.Float64frombits(rnd.Uint64()), "g": rnd.NormFloat64() * math.Pow(10, float64(rnd.IntN(60)-30))})
	}
	for i, body := range bodies {
		want, wantErr := json.Marshal(body)
		got, err := encodeBody(body)
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("body %d: error %v, want %v", i, err, wantErr)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("body %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// Encoded bodies do not share the pooled buffer: an earlier one stays as
// it was.
func TestEncodeBodyResultsAreTheirOwn(t *testing.T) {
	t.Parallel()
	first, err := encodeBody(map[string]any{"a": "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := encodeBody(map[string]any{"a": "second, longer"}); err != nil {
		t.Fatal(err)
	}
	if string(first) != `{"a":"first"}` {
		t.Errorf("the first body became %s", first)
	}
}

// A request body the caller keeps is left as it was, and prepared into
// the bytes the API wants.
func TestPrepareKeepsTheBody(t *testing.T) {
	t.Parallel()
	c, err := NewClient(Config{BaseURL: "http://127.0.0.1:1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	newBody := func() map[string]any {
		return map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": int64(3),
			"extra_body": map[string]any{"top_k": int64(5)}}
	}
	kept := newBody()
	var shared prepared
	if err := c.prepare(&Request{Body: kept}, &shared); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(kept), fmt.Sprint(newBody()); got != want {
		t.Errorf("the caller's body became %s, want %s", got, want)
	}
	if want := `{"max_tokens":3,"messages":[{"content":"hi","role":"user"}],"model":"m","stream":true,"stream_options":{"include_usage":true},"top_k":5}`; string(shared.body) != want {
		t.Errorf("body %s, want %s", shared.body, want)
	}
}

// A body prepares into its own fields only, whatever the bodies prepared
// before it held (the maps their top levels were copied to serve again).
func TestPreparedBodiesAreTheirOwn(t *testing.T) {
	t.Parallel()
	c, err := NewClient(Config{BaseURL: "http://127.0.0.1:1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"prompt": "a", "model": "x", "temperature": 0.5, "stream_options": map[string]any{"include_usage": false}},
			`{"model":"x","prompt":"a","stream":true,"stream_options":{"include_usage":false},"temperature":0.5}`},
		{map[string]any{"prompt": "b", "stream": false}, `{"model":"m","prompt":"b","stream":false}`},
		{map[string]any{"prompt": "c"}, `{"model":"m","prompt":"c","stream":true,"stream_options":{"include_usage":true}}`},
	} {
		var p prepared
		if err := c.prepare(&Request{Body: tc.body}, &p); err != nil {
			t.Fatal(err)
		}
		if string(p.body) != tc.want {
			t.Errorf("body %s, want %s", p.body, tc.want)
		}
	}
}
