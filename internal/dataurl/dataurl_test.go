package dataurl

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestPayloadAndDecodedLen(t *testing.T) {
	for _, file := range []string{"", "a", "ab", "abc", "abcd", strings.Repeat("x", 1000)} {
		url := Encode("png", []byte(file))
		payload, err := Payload(url)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := DecodedLen(payload); err != nil || n != len(file) {
			t.Errorf("%d bytes: DecodedLen %d, %v", len(file), n, err)
		}
		if got, _ := base64.StdEncoding.DecodeString(payload); string(got) != file {
			t.Errorf("%d bytes: the payload decodes to %d", len(file), len(got))
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"https://example.com/a.png", ErrRemote.Error()},
		{"data:image/png,abc", "want a base64 data URL"},
		{"file:///a.png", "want a base64 data URL"},
	} {
		if _, err := Payload(tc.url); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.url, err, tc.want)
		}
	}
	if _, err := Payload("http://x/y"); !errors.Is(err, ErrRemote) {
		t.Errorf("an http URL: %v, want ErrRemote", err)
	}
	if _, err := DecodedLen("abc"); err == nil {
		t.Error("DecodedLen took 3 characters")
	}
}

func TestHeaderReadsPastTheFirstChunk(t *testing.T) {
	// A JPEG whose frame header lies past the first chunk: its JFIF
	// segment, then a comment segment (0xFFFE) of 8000 bytes before it.
	jfif := []byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0}
	comment := append(append(jfif, 0xff, 0xfe, 0x1f, 0x42), make([]byte, 8000)...)
	sof := []byte{0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x20, 0x00, 0x30, 0x01, 0x01, 0x11, 0x00}
	payload := base64.StdEncoding.EncodeToString(append(comment, sof...))
	cfg, format, err := Header(payload)
	if err != nil || format != "jpeg" || cfg.Width != 48 || cfg.Height != 32 {
		t.Errorf("%+v %s %v; want a 48×32 jpeg", cfg, format, err)
	}
	if _, _, err := Header("!!!!"); err == nil || !strings.Contains(err.Error(), "base64 is broken") {
		t.Errorf("broken base64: %v", err)
	}
}
