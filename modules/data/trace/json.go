package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// jsonKeys are one JSON format's names for a record's fields.
type jsonKeys struct {
	timestamp, input, output, hashIDs string
}

var (
	mooncakeKeys = jsonKeys{"timestamp", "input_length", "output_length", "hash_ids"}
	jsonlKeys    = jsonKeys{"timestamp_ms", "input_tokens", "output_tokens", "hash_ids"}
)

func parseMooncake(line []byte) (row, error) { return parseJSON(line, mooncakeKeys) }
func parseJSONL(line []byte) (row, error)    { return parseJSON(line, jsonlKeys) }

// epoch is the zero of the JSON formats' timestamps, which are
// milliseconds from the trace's own origin.
var epoch = time.Unix(0, 0)

// sinceEpoch is the time v units after the epoch; false when v is
// negative, NaN, or past what a time.Duration holds (where converting it
// would wrap around).
func sinceEpoch(v float64, unit time.Duration) (time.Time, bool) {
	if !(v >= 0 && v < math.MaxInt64/float64(unit)) {
		return time.Time{}, false
	}
	return epoch.Add(time.Duration(v * float64(unit))), true
}

// parseJSON reads a JSON object line: the timestamp in milliseconds, the
// two lengths, the optional hash ids, and every other key into fields.
func parseJSON(line []byte, keys jsonKeys) (row, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return row{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var r row
	ms, err := jsonNumber(obj, keys.timestamp)
	if err != nil {
		return row{}, err
	}
	at, ok := sinceEpoch(ms, time.Millisecond)
	if !ok {
		return row{}, fmt.Errorf("%q: %v is out of range", keys.timestamp, ms)
	}
	r.at = at
	if r.input, err = jsonCount(obj, keys.input); err != nil {
		return row{}, err
	}
	if r.output, err = jsonCount(obj, keys.output); err != nil {
		return row{}, err
	}
	if raw, ok := obj[keys.hashIDs]; ok && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &r.hashIDs); err != nil {
			return row{}, fmt.Errorf("%q: not a list of integers: %s", keys.hashIDs, abbreviate(raw))
		}
	}
	for _, k := range []string{keys.timestamp, keys.input, keys.output, keys.hashIDs} {
		delete(obj, k)
	}
	if len(obj) > 0 {
		r.fields = make(map[string]any, len(obj))
		for k, raw := range obj {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return row{}, fmt.Errorf("%q: %w", k, err)
			}
			r.fields[k] = v
		}
	}
	return r, nil
}

// jsonNumber reads the required number key of obj.
func jsonNumber(obj map[string]json.RawMessage, key string) (float64, error) {
	raw, ok := obj[key]
	if !ok {
		return 0, fmt.Errorf("%q is missing", key)
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("%q: not a number: %s", key, abbreviate(raw))
	}
	return v, nil
}

// jsonCount reads the required token count key of obj: a whole number, 0
// or more.
func jsonCount(obj map[string]json.RawMessage, key string) (int, error) {
	v, err := jsonNumber(obj, key)
	if err != nil {
		return 0, err
	}
	return count(key, v)
}

// count checks a token count.
func count(name string, v float64) (int, error) {
	if v < 0 || v != math.Trunc(v) || v > math.MaxInt32 {
		return 0, fmt.Errorf("%q: %v is not a token count (a whole number, 0 or more)", name, v)
	}
	return int(v), nil
}

// abbreviate cuts a value quoted in an error.
func abbreviate(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
