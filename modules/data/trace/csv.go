package trace

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// csvColumns are a CSV format's header names (compared without case) of
// the timestamp and the two lengths.
type csvColumns struct {
	timestamp, input, output string
}

var (
	azureColumns = csvColumns{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}
	burstColumns = csvColumns{"Timestamp", "Request tokens", "Response tokens"}
)

// csvParser reads the header line and returns the parser of the rows
// under it: at reads the timestamp column.
func (r *Reader) csvParser(header []byte, cols csvColumns, at func(string) (time.Time, error)) (func([]byte) (row, error), error) {
	names, err := csvFields(header)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: the header: %w", r.name, r.line, err)
	}
	index := func(want string) (int, error) {
		for i, n := range names {
			if strings.EqualFold(strings.TrimSpace(n), want) {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%s:%d: the header has no column %q (%s trace)", r.name, r.line, want, r.format)
	}
	ts, err := index(cols.timestamp)
	if err != nil {
		return nil, err
	}
	in, err := index(cols.input)
	if err != nil {
		return nil, err
	}
	out, err := index(cols.output)
	if err != nil {
		return nil, err
	}
	return func(line []byte) (row, error) {
		vals, err := csvFields(line)
		if err != nil {
			return row{}, err
		}
		if len(vals) != len(names) {
			return row{}, fmt.Errorf("%d columns, the header has %d", len(vals), len(names))
		}
		var rw row
		if rw.at, err = at(vals[ts]); err != nil {
			return row{}, fmt.Errorf("%q: %w", names[ts], err)
		}
		if rw.input, err = csvCount(names[in], vals[in]); err != nil {
			return row{}, err
		}
		if rw.output, err = csvCount(names[out], vals[out]); err != nil {
			return row{}, err
		}
		for i, v := range vals {
			if i == ts || i == in || i == out {
				continue
			}
			if rw.fields == nil {
				rw.fields = make(map[string]any, len(vals)-3)
			}
			rw.fields[names[i]] = v
		}
		return rw, nil
	}, nil
}

// csvFields splits one CSV line.
func csvFields(line []byte) ([]string, error) {
	rd := csv.NewReader(strings.NewReader(string(line)))
	rd.FieldsPerRecord = -1
	return rd.Read()
}

func csvCount(name, s string) (int, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %q is not a number", name, s)
	}
	return count(name, v)
}

// azureLayouts are the Azure traces' TIMESTAMP forms: 2023's
// "2023-11-16 18:15:46.6805900" and 2024's, which adds "+00:00".
var azureLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano}

func parseAzureTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range azureLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date and time like 2023-11-16 18:15:46.6805900", s)
}

// parseSeconds reads BurstGPT's timestamp: seconds from the trace's origin.
func parseSeconds(s string) (time.Time, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	at, ok := sinceEpoch(v, time.Second)
	if err != nil || !ok {
		return time.Time{}, fmt.Errorf("%q is not a number of seconds, 0 or more", s)
	}
	return at, nil
}
