package gpumetrics

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The clock event reasons' field has two names: newer drivers call it
// clocks_event_reasons.active and still accept the older
// clocks_throttle_reasons.active, which older drivers know alone.
const (
	smiReasons    = "clocks_event_reasons.active"
	smiReasonsOld = "clocks_throttle_reasons.active"
)

// smiQueries are the field lists the sampler asks nvidia-smi's
// --query-gpu for, in the order it tries them: a driver that knows
// neither name of the reasons' field is asked without it. nvidia-smi
// --help-query-gpu lists no energy counter (driver 590), so the energy of
// GPUs read by nvidia-smi is always their power integrated.
var smiQueries = [][]string{
	smiFields(smiReasons),
	smiFields(smiReasonsOld),
	smiFields(),
}

func smiFields(reasons ...string) []string {
	fields := []string{"index", "uuid", "name", "utilization.gpu", "memory.used", "memory.total", "power.draw", "temperature.gpu", "clocks.sm"}
	return append(fields, reasons...)
}

// smiUnits are the units nvidia-smi prints after a field's values unless
// told nounits; ParseSMI accepts values with or without them.
var smiUnits = map[string]string{
	"utilization.gpu": "%",
	"memory.used":     "MiB",
	"memory.total":    "MiB",
	"power.draw":      "W",
	"clocks.sm":       "MHz",
}

// ParseSMI reads the CSV nvidia-smi prints for --query-gpu=FIELDS
// --format=csv,noheader,nounits, fields being the fields queried in their
// order, into a Reading at the time at. A value nvidia-smi cannot give
// ("[N/A]", "[Not Supported]", "[Unknown Error]", any other bracketed
// text, or "N/A") is left nil. A line with the wrong number of values, or
// a value that should be a number and is not, is an error naming its line
// and field. A field llmrun does not read is skipped.
func ParseSMI(out io.Reader, fields []string, at time.Time) (Reading, error) {
	r := csv.NewReader(out)
	r.FieldsPerRecord = len(fields)
	r.TrimLeadingSpace = true
	r.LazyQuotes = true
	reading := Reading{At: at}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			return reading, nil
		}
		if err != nil {
			return Reading{}, fmt.Errorf("nvidia-smi output: %w", err)
		}
		line, _ := r.FieldPos(0)
		s, err := smiSample(record, fields)
		if err != nil {
			return Reading{}, fmt.Errorf("nvidia-smi output line %d: %w", line, err)
		}
		reading.GPUs = append(reading.GPUs, s)
	}
}

func smiSample(record, fields []string) (GPUSample, error) {
	var s GPUSample
	for i, field := range fields {
		v := strings.TrimSpace(record[i])
		if smiMissing(v) {
			continue
		}
		var err error
		switch field {
		case "index":
			s.GPU.Index = v
		case "uuid":
			s.GPU.UUID = v
		case "name":
			s.GPU.Model = v
		case smiReasons, smiReasonsOld:
			var mask uint64
			mask, err = strconv.ParseUint(v, 0, 64)
			s.Reasons = &mask
		default:
			target := smiTarget(&s, field)
			if target == nil {
				continue
			}
			var n float64
			n, err = strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, smiUnits[field])), 64)
			*target = &n
		}
		if err != nil {
			return GPUSample{}, fmt.Errorf("field %s: %q is not a number", field, v)
		}
	}
	return s, nil
}

// smiTarget is the field of s a numeric nvidia-smi field fills, nil for a
// field llmrun does not read.
func smiTarget(s *GPUSample, field string) **float64 {
	switch field {
	case "utilization.gpu":
		return &s.UtilPercent
	case "memory.used":
		return &s.MemUsedMiB
	case "memory.total":
		return &s.MemTotalMiB
	case "power.draw":
		return &s.PowerW
	case "temperature.gpu":
		return &s.TempC
	case "clocks.sm":
		return &s.SMClockMHz
	}
	return nil
}

// smiMissing is whether v is how nvidia-smi says it has no value.
func smiMissing(v string) bool {
	return v == "" || v == "N/A" || (strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]"))
}
