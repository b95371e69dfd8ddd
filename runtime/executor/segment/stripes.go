package segment

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// MaxPeriod bounds the stripe pattern of a sequence: the least common
// denominator of its points.
const MaxPeriod = 1 << 20

// Part is one segment's stripe of its sequence. Of every Period
// consecutive indices, the segment owns the same positions, as many as
// its size times Period, and every index is owned by exactly one segment
// of the sequence. The positions are dealt one at a time to the segment
// furthest behind its exact share (the first one on a tie), so each
// segment's count of the first n indices stays within one of n times its
// size. The zero Part is the whole plan: it owns every index.
type Part struct {
	seg      Segment
	seq      Sequence
	period   int64
	position []int64 // the owned positions in [0, period), increasing
}

// NewPart returns the part of s in seq; seq nil stands for Filled(s).
func NewPart(seq Sequence, s Segment) (Part, error) {
	if seq == nil {
		seq = Filled(s)
	}
	at := seq.index(s)
	if at < 0 {
		return Part{}, fmt.Errorf("segment %s is not one of the sequence's segments", s)
	}
	period := big.NewInt(1)
	for _, t := range seq {
		d := t.To.Denom()
		gcd := new(big.Int).GCD(nil, nil, period, d)
		period.Mul(period, new(big.Int).Quo(d, gcd))
		if period.Cmp(big.NewInt(MaxPeriod)) > 0 {
			return Part{}, fmt.Errorf("the sequence's points need a common denominator above %d; use simpler fractions", MaxPeriod)
		}
	}
	p := period.Int64()
	shares := make([]int64, len(seq)) // each segment's positions per period
	for i, t := range seq {
		n := new(big.Rat).Mul(t.Size(), new(big.Rat).SetInt64(p))
		shares[i] = n.Num().Int64() // an integer: p is a multiple of every denominator
	}
	dealt := make([]int64, len(seq))
	var position []int64
	for j := int64(0); j < p; j++ {
		best, bestBehind := 0, int64(-1<<62)
		for i, n := range shares {
			// how far segment i is behind its exact share of j+1
			// positions, in 1/p of a position
			if behind := n*(j+1) - dealt[i]*p; behind > bestBehind {
				best, bestBehind = i, behind
			}
		}
		dealt[best]++
		if best == at {
			position = append(position, j)
		}
	}
	return Part{seg: s, seq: seq, period: p, position: position}, nil
}

// Whole says whether the part is the whole plan (no segment).
func (p Part) Whole() bool { return p.period == 0 }

// Segment is the part's segment; Sequence the sequence it belongs to.
func (p Part) Segment() Segment   { return p.seg }
func (p Part) Sequence() Sequence { return p.seq }

// Scale is the part's share of n: how many of the indices 0..n−1 it owns.
func (p Part) Scale(n int64) int64 {
	if p.Whole() || n <= 0 {
		return max(n, 0)
	}
	rest := n % p.period
	return n/p.period*int64(len(p.position)) + int64(sort.Search(len(p.position), func(k int) bool { return p.position[k] >= rest }))
}

// ScaleInt is Scale for an int.
func (p Part) ScaleInt(n int) int { return int(p.Scale(int64(n))) }

// Owns says whether index i (from 0) is the part's.
func (p Part) Owns(i int64) bool {
	if p.Whole() {
		return true
	}
	r := i % p.period
	k := sort.Search(len(p.position), func(k int) bool { return p.position[k] >= r })
	return k < len(p.position) && p.position[k] == r
}

// Count is how many of the indices from..to−1 the part owns.
func (p Part) Count(from, to int64) int64 { return p.Scale(to) - p.Scale(from) }

// String is "from:to in sequence", or "whole" for the whole plan.
func (p Part) String() string {
	if p.Whole() {
		return "whole"
	}
	return p.seg.String() + " of " + p.seq.String()
}

// String writes the sequence's points.
func (seq Sequence) String() string {
	if len(seq) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(ratString(seq[0].From))
	for _, t := range seq {
		b.WriteString("," + ratString(t.To))
	}
	return b.String()
}
