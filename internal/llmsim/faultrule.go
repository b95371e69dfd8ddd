package llmsim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A FaultRule injects Fault into a share Rate, in (0, 1], of the generation
// requests. A server draws at most one of its rules per request, from a
// random source seeded by Config.Seed and the request's arrival number, so
// a given seed and arrival order always fault the same requests. A
// mid-stream fault drawn for a non-streamed request is not injected.
type FaultRule struct {
	Fault Fault
	Rate  float64
}

// ParseFaultRule parses a --fault flag, NAME:RATE[:PARAM=VALUE[,...]],
// such as "http_5xx:0.05" or "stall:0.01:after=5,duration=2s". The
// parameters are those of ParseFault, with their defaults.
func ParseFaultRule(s string) (FaultRule, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) < 2 {
		return FaultRule{}, errors.New("want NAME:RATE[:PARAM=VALUE,...], such as reset:0.01:after=10")
	}
	rate, err := strconv.ParseFloat(parts[1], 64)
	if err != nil {
		return FaultRule{}, fmt.Errorf("rate %q is not a number", parts[1])
	}
	var params []string
	if len(parts) == 3 {
		params = strings.Split(parts[2], ",")
	}
	f, err := parseFault(parts[0], params)
	if err != nil {
		return FaultRule{}, err
	}
	r := FaultRule{Fault: f, Rate: rate}
	return r, r.validate()
}

// validate reports a rate out of range or an invalid fault.
func (r *FaultRule) validate() error {
	if !(r.Rate > 0 && r.Rate <= 1) {
		return fmt.Errorf("rate %g: want a share of requests in (0, 1]", r.Rate)
	}
	return r.Fault.validate()
}

// String returns r in --fault syntax, every parameter spelt out.
func (r FaultRule) String() string {
	s := r.Fault.Name + ":" + strconv.FormatFloat(r.Rate, 'g', -1, 64)
	if p := r.Fault.params(); len(p) > 0 {
		s += ":" + strings.Join(p, ",")
	}
	return s
}

// faultFlag is the repeatable --fault flag. Its first use replaces the
// configured rules; later ones add to them.
type faultFlag struct {
	rules *[]FaultRule
	used  bool
}

func (f *faultFlag) Set(s string) error {
	r, err := ParseFaultRule(s)
	if err != nil {
		return err
	}
	if !f.used {
		*f.rules, f.used = nil, true
	}
	*f.rules = append(*f.rules, r)
	return nil
}

func (f *faultFlag) String() string {
	s := make([]string, len(*f.rules))
	for i, r := range *f.rules {
		s[i] = r.String()
	}
	return strings.Join(s, " ")
}

// Type names the flag's value in the help.
func (f *faultFlag) Type() string { return "NAME:RATE[:PARAM=VALUE,...]" }
