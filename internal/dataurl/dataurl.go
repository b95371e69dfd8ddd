// Package dataurl reads the images of chat requests sent as base64 data
// URLs ("data:image/png;base64,..."): their payload, their size in bytes
// without decoding them, and their width and height from their header.
// The client (its per-request image figures), the data module (images a
// dataset names) and the simulator (its prefill charge for images) read
// them alike.
package dataurl

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"strings"

	_ "image/gif"  // GIF headers
	_ "image/jpeg" // JPEG headers
	_ "image/png"  // PNG headers
)

// ErrRemote is the error of an http(s) URL: an image not in the request.
var ErrRemote = errors.New("an http(s) URL, not a data URL")

// Payload returns the base64 payload of a data URL; ErrRemote for an
// http(s) URL.
func Payload(url string) (string, error) {
	if strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") {
		return "", ErrRemote
	}
	_, payload, ok := strings.Cut(url, ";base64,")
	if !strings.HasPrefix(url, "data:") || !ok {
		return "", fmt.Errorf("%.40q: want a base64 data URL (data:image/png;base64,...) or an http(s) URL", url)
	}
	return payload, nil
}

// Encode is the base64 data URL of an image file of format ("png",
// "jpeg", "gif").
func Encode(format string, file []byte) string {
	prefix := "data:image/" + format + ";base64,"
	out := make([]byte, len(prefix)+base64.StdEncoding.EncodedLen(len(file)))
	copy(out, prefix)
	base64.StdEncoding.Encode(out[len(prefix):], file)
	return string(out)
}

// DecodedLen is the length of a base64 payload once decoded, without
// decoding it.
func DecodedLen(payload string) (int, error) {
	if len(payload)%4 != 0 {
		return 0, fmt.Errorf("the image's base64 is broken: %d characters, not a multiple of 4", len(payload))
	}
	return len(payload)/4*3 - (len(payload) - len(strings.TrimRight(payload, "="))), nil
}

// headerChunk is how much of a payload Header decodes first: enough for
// a PNG's or a GIF's header and most JPEGs' first frame.
const headerChunk = 4096

// Header reads an image's size and format ("png", "jpeg", "gif") from
// its base64 payload: from its first headerChunk characters, or, when
// its header lies further (a JPEG's frame after large metadata), from
// all of it.
func Header(payload string) (image.Config, string, error) {
	if len(payload) > headerChunk {
		if cfg, format, err := header(payload[:headerChunk]); err == nil {
			return cfg, format, nil
		}
	}
	return header(payload)
}

func header(payload string) (image.Config, string, error) {
	file, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return image.Config{}, "", fmt.Errorf("the image's base64 is broken: %w", err)
	}
	return FileHeader(file)
}

// FileHeader reads an image file's size and format from its header.
func FileHeader(file []byte) (image.Config, string, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(file))
	if err != nil {
		return image.Config{}, "", fmt.Errorf("not a PNG, JPEG or GIF image: %w", err)
	}
	return cfg, format, nil
}
