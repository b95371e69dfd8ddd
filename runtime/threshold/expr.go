package threshold

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Method is a threshold's aggregation method: what is computed from a
// metric's samples before the comparison.
type Method string

// The aggregation methods of k6's grammar.
const (
	MethodAvg   Method = "avg"   // trend: the mean
	MethodMin   Method = "min"   // trend: the smallest value
	MethodMax   Method = "max"   // trend: the largest value
	MethodMed   Method = "med"   // trend: the median, p(50)
	MethodCount Method = "count" // counter: the sum of the values added
	MethodRate  Method = "rate"  // counter: count per second; rate: the fraction of non-zero values
	MethodValue Method = "value" // gauge: the last value
	// MethodPercentile is p(N); Expression.P holds N.
	MethodPercentile Method = "p"
)

// Operator is a threshold's comparison.
type Operator string

// The comparison operators. === is the same as == (values are numbers).
const (
	OpLess         Operator = "<"
	OpLessEqual    Operator = "<="
	OpGreater      Operator = ">"
	OpGreaterEqual Operator = ">="
	OpEqual        Operator = "=="
	OpStrictEqual  Operator = "==="
	OpNotEqual     Operator = "!="
)

// Compare reports whether "observed op bound" holds.
func (o Operator) Compare(observed, bound float64) bool {
	switch o {
	case OpLess:
		return observed < bound
	case OpLessEqual:
		return observed <= bound
	case OpGreater:
		return observed > bound
	case OpGreaterEqual:
		return observed >= bound
	case OpEqual, OpStrictEqual:
		return observed == bound
	case OpNotEqual:
		return observed != bound
	}
	return false
}

// Expression is one parsed threshold expression, such as p(95)<500: an
// aggregation, a comparison and the number it is compared with.
type Expression struct {
	Method Method
	// P is N of p(N), from 0 to 100; 50 for med; 0 otherwise.
	P     float64
	Op    Operator
	Bound float64
}

// Aggregation is the aggregation as the grammar writes it: "avg", "p(95)".
func (e Expression) Aggregation() string {
	if e.Method == MethodPercentile {
		return "p(" + formatNumber(e.P) + ")"
	}
	return string(e.Method)
}

// String is the expression in canonical form, without spaces: "p(95)<500".
func (e Expression) String() string {
	return e.Aggregation() + string(e.Op) + formatNumber(e.Bound)
}

const (
	wantAggregation = "want avg, min, max, med, count, rate, value or p(N)"
	wantOperator    = "want <, <=, >, >=, ==, === or !="
	operatorChars   = "<>=!"
)

var (
	operators = map[string]Operator{
		"<": OpLess, "<=": OpLessEqual, ">": OpGreater, ">=": OpGreaterEqual,
		"==": OpEqual, "===": OpStrictEqual, "!=": OpNotEqual,
	}
	plainMethods = map[string]Method{
		"avg": MethodAvg, "min": MethodMin, "max": MethodMax, "med": MethodMed,
		"count": MethodCount, "rate": MethodRate, "value": MethodValue,
	}
	// numberRE is a decimal number: optional sign, digits with an optional
	// fraction (or a fraction alone), optional exponent. No hex, no
	// underscores, no Inf or NaN.
	numberRE = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
)

// ParseExpression parses a threshold expression of k6's grammar:
// "aggregation operator number", with any whitespace around the parts (and
// inside p( N )). The aggregation is avg, min, max, med, count, rate, value
// or p(N) with N a number from 0 to 100 (decimals allowed: p(99.9)); the
// operator one of <, <=, >, >=, ==, === and !=; the number a decimal number
// with an optional sign, fraction and exponent (500, -1, 0.01, .5, 1e3). The
// errors say what is wrong in words and quote the expression.
func ParseExpression(src string) (Expression, error) {
	s := strings.TrimSpace(src)
	if s == "" {
		return Expression{}, errors.New("empty threshold expression")
	}
	at := strings.IndexAny(s, operatorChars)
	if at < 0 {
		return Expression{}, fmt.Errorf("no comparison operator in %q: %s", s, wantOperator)
	}
	end := at
	for end < len(s) && strings.IndexByte(operatorChars, s[end]) >= 0 {
		end++
	}
	opText := s[at:end]
	op, ok := operators[opText]
	if !ok {
		return Expression{}, fmt.Errorf("unknown operator %q in %q: %s", opText, s, wantOperator)
	}
	e := Expression{Op: op}

	agg := strings.TrimSpace(s[:at])
	if agg == "" {
		return Expression{}, fmt.Errorf("missing aggregation before %q in %q: %s", opText, s, wantAggregation)
	}
	if m, ok := plainMethods[agg]; ok {
		e.Method = m
		if m == MethodMed {
			e.P = 50
		}
	} else if p, isP, err := parsePercentile(agg); isP {
		if err != nil {
			return Expression{}, err
		}
		e.Method, e.P = MethodPercentile, p
	} else {
		return Expression{}, fmt.Errorf("unknown aggregation %q, %s", agg, wantAggregation)
	}

	num := strings.TrimSpace(s[end:])
	if num == "" {
		return Expression{}, fmt.Errorf("missing number after %q in %q: want a number, like 500 or 0.01", opText, s)
	}
	v, ok := parseNumber(num)
	if !ok {
		return Expression{}, fmt.Errorf("invalid number %q in %q: want a number, like 500, 0.01 or 1e3", num, s)
	}
	e.Bound = v
	return e, nil
}

// parsePercentile parses "p(N)" (spaces allowed after p and inside the
// parentheses). isP says whether agg is meant as a percentile at all: "p"
// followed by "(".
func parsePercentile(agg string) (p float64, isP bool, err error) {
	rest, ok := strings.CutPrefix(agg, "p")
	if !ok {
		return 0, false, nil
	}
	rest = strings.TrimSpace(rest)
	inner, ok := strings.CutPrefix(rest, "(")
	if !ok {
		return 0, false, nil
	}
	bad := fmt.Errorf("invalid percentile %q: want p(N) with N a number from 0 to 100, like p(95) or p(99.9)", agg)
	inner, ok = strings.CutSuffix(inner, ")")
	if !ok {
		return 0, true, bad
	}
	p, ok = parseNumber(strings.TrimSpace(inner))
	if !ok || p < 0 || p > 100 {
		return 0, true, bad
	}
	return p, true, nil
}

func parseNumber(s string) (float64, bool) {
	if !numberRE.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false // out of float64's range
	}
	return v, true
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
