package summary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/llmrun/llmrun/internal/capped"
)

// ParseStream reads the result file r streams, named name in errors, as
// Parse reads one whole, holding no more of its text at a time than one
// element of a list or map (a scenario, a timeline point, a metric) or
// one other section: a result file read this way costs about what it
// parses to, not its bytes as well. A file Parse would refuse, or one not
// as WriteJSON writes it (a field named in another case, or twice), is
// read again whole from whole and given to Parse, so that the result, or
// the error that says where and why, is always Parse's. A stream that
// fails (a damaged gzip stream, a file beyond its bound) is its error.
func ParseStream(name string, r io.Reader, whole func() ([]byte, error)) (*Summary, error) {
	in := &capped.FailureReader{R: r}
	s, err := decodeStream(in)
	switch {
	case err == nil:
		return s, nil
	case in.Err != nil:
		return nil, in.Err
	}
	b, err := whole()
	if err != nil {
		return nil, err
	}
	return Parse(name, b)
}

// errNotStreamed is a result file decodeStream leaves to Parse.
var errNotStreamed = errors.New("not a result file as WriteJSON writes it")

// decodeStream decodes a result file from r, field by field, the
// elements of its lists and maps one by one, and checks it as Parse
// does; any error means that Parse is to read it.
func decodeStream(r io.Reader) (*Summary, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var (
		s     Summary
		h     head
		v     = reflect.ValueOf(&s).Elem()
		index = summaryFields()
		seen  = make(map[string]bool, len(index))
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		i, known := index[key]
		if seen[key] || (!known && foldsToField(key)) {
			return nil, errNotStreamed // encoding/json's rules for these are Parse's
		}
		seen[key] = true
		switch {
		case key == "schema_version":
			err = dec.Decode(&h.SchemaVersion)
		case key == "meta":
			err = dec.Decode(&h.Meta)
		case key == "serving":
			err = dec.Decode(&h.Serving)
		case !known:
			err = dec.Decode(new(json.RawMessage)) // ignored, as by json.Unmarshal
		default:
			err = decodeField(dec, v.Field(i))
		}
		if err != nil {
			return nil, err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if err := onlySpace(io.MultiReader(dec.Buffered(), r)); err != nil {
		return nil, err
	}
	if err := h.check(""); err != nil {
		return nil, err
	}
	s.SchemaVersion = *h.SchemaVersion
	if err := json.Unmarshal(h.Meta, &s.Meta); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(h.Serving, &s.Serving); err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// summaryFields maps the JSON name of each field of Summary to its index.
var summaryFields = sync.OnceValue(func() map[string]int {
	t := reflect.TypeFor[Summary]()
	index := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			index[name] = i
		}
	}
	return index
})

// foldsToField says whether key, not a field's name, is one in another
// case, which json.Unmarshal would decode into the field.
func foldsToField(key string) bool {
	for name := range summaryFields() {
		if strings.EqualFold(key, name) {
			return true
		}
	}
	return false
}

// decodeField decodes the next value of dec into the field f: a list or
// a map with string keys element by element, anything else whole, with
// the result json.Unmarshal gives.
func decodeField(dec *json.Decoder, f reflect.Value) error {
	t := f.Type()
	streamed := (t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8) ||
		(t.Kind() == reflect.Map && t.Key() == reflect.TypeFor[string]())
	if !streamed || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return dec.Decode(f.Addr().Interface())
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch {
	case tok == nil:
		f.SetZero() // null
		return nil
	case t.Kind() == reflect.Slice && tok == json.Delim('['):
		list, err := decodeList(dec, t)
		if err != nil {
			return err
		}
		f.Set(list)
		return expectDelim(dec, ']')
	case t.Kind() == reflect.Map && tok == json.Delim('{'):
		m := reflect.MakeMap(t)
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			elem := reflect.New(t.Elem())
			if err := dec.Decode(elem.Interface()); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(key.(string)), elem.Elem())
		}
		f.Set(m)
		return expectDelim(dec, '}')
	}
	return fmt.Errorf("%v where a %s was due", tok, t.Kind())
}

// maxPiece is the most elements of a piece of a list decodeList decodes.
const maxPiece = 1024

// decodeList decodes the elements of a list, up to its closing bracket,
// into a slice of type t. They are decoded into pieces of up to maxPiece
// elements, then copied into a slice of their number: a list costs twice
// its elements, not the five times that growing one slice by appending
// leaves behind.
func decodeList(dec *json.Decoder, t reflect.Type) (reflect.Value, error) {
	var (
		pieces []reflect.Value
		n      int
		piece  = reflect.MakeSlice(t, 0, 8)
	)
	for dec.More() {
		if piece.Len() == piece.Cap() {
			pieces = append(pieces, piece)
			piece = reflect.MakeSlice(t, 0, min(2*piece.Cap(), maxPiece))
		}
		piece = piece.Slice(0, piece.Len()+1)
		if err := dec.Decode(piece.Index(piece.Len() - 1).Addr().Interface()); err != nil {
			return reflect.Value{}, err
		}
		n++
	}
	if len(pieces) == 0 {
		return piece, nil
	}
	list := reflect.MakeSlice(t, 0, n)
	for _, p := range append(pieces, piece) {
		list = reflect.AppendSlice(list, p)
	}
	return list, nil
}

// expectDelim reads the next token of dec, which must be want.
func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("%v where %v was due", tok, want)
	}
	return nil
}

// onlySpace reads r to its end, which must hold only JSON's white space,
// as after the value json.Unmarshal reads.
func onlySpace(r io.Reader) error {
	buf := make([]byte, 4<<10)
	for {
		n, err := r.Read(buf)
		if len(bytes.Trim(buf[:n], " \t\r\n")) > 0 {
			return errors.New("more after the result file's object")
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
