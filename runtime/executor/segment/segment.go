// Package segment parses k6's execution segments and divides integer
// amounts (VUs, iterations, arrivals) among the segments of a sequence
// exactly: the parts of every amount add up to it, and the indices
// 0..N−1 of N things (the whole plan's VUs or arrivals) are striped over
// the segments so that each index belongs to exactly one of them.
//
// A segment is a slice [from, to) of the interval [0, 1], written
// "from:to" (or "to" alone, meaning "0:to"); each bound is a fraction
// ("1/3"), a percentage ("50%") or a decimal ("0.5"). A sequence is the
// ordered points "0,1/3,2/3,1" that cut [0, 1] into adjacent segments.
// A segment given without a sequence belongs to the sequence of itself
// and the gaps on either side, as in k6.
package segment

import (
	"fmt"
	"math/big"
	"strings"
)

// Segment is [From, To) within [0, 1].
type Segment struct {
	From, To *big.Rat
}

// String writes the segment as "from:to" with fractions.
func (s Segment) String() string { return ratString(s.From) + ":" + ratString(s.To) }

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return r.String()
}

// Size is To − From.
func (s Segment) Size() *big.Rat { return new(big.Rat).Sub(s.To, s.From) }

// Parse reads a segment: "from:to", or "to" alone for "0:to".
func Parse(text string) (Segment, error) {
	text = strings.TrimSpace(text)
	fromText, toText, ok := strings.Cut(text, ":")
	if !ok {
		fromText, toText = "0", text
	}
	from, err := parsePoint(fromText)
	if err != nil {
		return Segment{}, fmt.Errorf("%q: start: %w", text, err)
	}
	to, err := parsePoint(toText)
	if err != nil {
		return Segment{}, fmt.Errorf("%q: end: %w", text, err)
	}
	if from.Cmp(to) >= 0 {
		return Segment{}, fmt.Errorf("%q: the start must be less than the end", text)
	}
	return Segment{From: from, To: to}, nil
}

// parsePoint reads a point of [0, 1]: "1/3", "50%" or "0.5".
func parsePoint(text string) (*big.Rat, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("empty: want a fraction (1/3), a percentage (50%%) or a decimal (0.5)")
	}
	r := new(big.Rat)
	body := strings.TrimSuffix(text, "%")
	// big.Rat.SetString also reads exponents and hexadecimal; only plain
	// fractions and decimals are meant.
	if strings.Trim(body, "0123456789./") != "" || strings.Count(body, "/")+strings.Count(body, ".") > 1 {
		return nil, fmt.Errorf("%q is not a fraction (1/3), a percentage (50%%) or a decimal (0.5)", text)
	}
	if _, ok := r.SetString(body); !ok {
		return nil, fmt.Errorf("%q is not a fraction (1/3), a percentage (50%%) or a decimal (0.5)", text)
	}
	if body != text {
		r.Quo(r, big.NewRat(100, 1))
	}
	if r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, fmt.Errorf("%q is outside [0, 1]", text)
	}
	return r, nil
}

// Sequence is the adjacent segments that cut [0, 1], in order.
type Sequence []Segment

// ParseSequence reads the points "0,1/3,2/3,1": at least two, strictly
// increasing. As in k6, points that do not reach 0 or 1 are completed
// with them: "1/3,2/3" is the sequence 0,1/3,2/3,1.
func ParseSequence(text string) (Sequence, error) {
	fields := strings.Split(text, ",")
	points := make([]*big.Rat, 0, len(fields)+2)
	for i, f := range fields {
		p, err := parsePoint(f)
		if err != nil {
			return nil, fmt.Errorf("point %d: %w", i+1, err)
		}
		if i > 0 && p.Cmp(points[len(points)-1]) <= 0 {
			return nil, fmt.Errorf("point %d (%s) is not greater than the one before it (%s): points must increase", i+1, strings.TrimSpace(f), strings.TrimSpace(fields[i-1]))
		}
		points = append(points, p)
	}
	if len(points) < 2 {
		return nil, fmt.Errorf("%q: want at least two points, such as 0,1/2,1", text)
	}
	if points[0].Sign() != 0 {
		points = append([]*big.Rat{new(big.Rat)}, points...)
	}
	if one := big.NewRat(1, 1); points[len(points)-1].Cmp(one) != 0 {
		points = append(points, one)
	}
	seq := make(Sequence, len(points)-1)
	for i := range seq {
		seq[i] = Segment{From: points[i], To: points[i+1]}
	}
	return seq, nil
}

// Equal is the sequence of n equal segments, 0,1/n,…,1 (n ≥ 1).
func Equal(n int) Sequence {
	seq := make(Sequence, n)
	for i := range seq {
		seq[i] = Segment{From: big.NewRat(int64(i), int64(n)), To: big.NewRat(int64(i+1), int64(n))}
	}
	return seq
}

// Filled is the sequence of s alone: s and the gaps before and after it.
func Filled(s Segment) Sequence {
	var seq Sequence
	if s.From.Sign() > 0 {
		seq = append(seq, Segment{From: new(big.Rat), To: s.From})
	}
	seq = append(seq, s)
	if one := big.NewRat(1, 1); s.To.Cmp(one) < 0 {
		seq = append(seq, Segment{From: s.To, To: one})
	}
	return seq
}

// index is the position of s in seq, or −1.
func (seq Sequence) index(s Segment) int {
	for i, t := range seq {
		if t.From.Cmp(s.From) == 0 && t.To.Cmp(s.To) == 0 {
			return i
		}
	}
	return -1
}
