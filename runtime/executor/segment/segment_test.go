package segment

import (
	"math/big"
	"runtime"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"1/3:2/3", "1/3:2/3"},
		{"0:1/3", "0:1/3"},
		{"2/3:1", "2/3:1"},
		{"1/4", "0:1/4"},
		{"50%:100%", "1/2:1"},
		{"0.25:0.75", "1/4:3/4"},
		{" 12.5% : 1 ", "1/8:1"},
		{"0:1", "0:1"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := s.String(); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "empty"},
		{"2/3:1/3", "less than the end"},
		{"1/2:1/2", "less than the end"},
		{"0:3/2", "outside [0, 1]"},
		{"0:150%", "outside [0, 1]"},
		{"-1/2:1", "not a fraction"},
		{"a:b", "not a fraction"},
		{"1e-1:1", "not a fraction"},
		{"0:1/0", "not a fraction"},
		{"0.1.2:1", "not a fraction"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tt.in, err, tt.want)
		}
	}
}

func TestParseSequence(t *testing.T) {
	seq, err := ParseSequence("0, 1/3, 50%, 0.75, 1")
	if err != nil {
		t.Fatal(err)
	}
	if got := seq.String(); got != "0,1/3,1/2,3/4,1" {
		t.Errorf("sequence %s", got)
	}
	for in, want := range map[string]string{
		"1/3,2/3": "0,1/3,2/3,1",
		"0,1/2":   "0,1/2,1",
		"1/4,1":   "0,1/4,1",
	} {
		seq, err := ParseSequence(in)
		if err != nil || seq.String() != want {
			t.Errorf("ParseSequence(%q) = %s, %v; want %s, completed with 0 and 1", in, seq, err, want)
		}
	}
	for in, want := range map[string]string{
		"0":           "at least two points",
		"1":           "at least two points",
		"0,1/2,1/2,1": "point 3 (1/2) is not greater",
		"0,x,1":       "point 2",
	} {
		if _, err := ParseSequence(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSequence(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func mustSequence(t *testing.T, text string) Sequence {
	t.Helper()
	seq, err := ParseSequence(text)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// TestPartsCoverExactly: for every sequence and n, the parts' shares of n
// add up to n, each index below n is owned by exactly one part, Scale
// counts the owned indices, and each share is within one of n × size.
func TestPartsCoverExactly(t *testing.T) {
	for _, text := range []string{"0,1", "0,1/2,1", "0,1/3,2/3,1", "0,1/3,1/2,1", "0,1/10,1/4,3/5,1", "0,0.1,0.11,1", "0,1/7,1"} {
		seq := mustSequence(t, text)
		parts := make([]Part, len(seq))
		for i, s := range seq {
			p, err := NewPart(seq, s)
			if err != nil {
				t.Fatal(err)
			}
			parts[i] = p
		}
		for n := int64(0); n <= 250; n++ {
			var sum int64
			for _, p := range parts {
				share := p.Scale(n)
				sum += share
				exact := new(big.Rat).Mul(p.Segment().Size(), new(big.Rat).SetInt64(n))
				lo, _ := exact.Float64()
				if f := float64(share); f < lo-1 || f > lo+1 {
					t.Errorf("%s: part %s of %d = %d, far from %.3f", text, p.Segment(), n, share, lo)
				}
			}
			if sum != n {
				t.Errorf("%s: shares of %d add up to %d", text, n, sum)
			}
		}
		counts := make([]int64, len(parts))
		for i := int64(0); i < 500; i++ {
			owners := 0
			for k, p := range parts {
				if p.Owns(i) {
					owners++
					counts[k]++
				}
				if got := p.Scale(i + 1); got != counts[k] {
					t.Fatalf("%s: part %s: Scale(%d) = %d, owns %d of them", text, p.Segment(), i+1, got, counts[k])
				}
			}
			if owners != 1 {
				t.Fatalf("%s: index %d has %d owners", text, i, owners)
			}
		}
	}
}

// TestSegmentAlone: a segment without a sequence is striped within its
// filled sequence, and is exactly the segment of that sequence.
func TestSegmentAlone(t *testing.T) {
	s, err := Parse("1/3:2/3")
	if err != nil {
		t.Fatal(err)
	}
	alone, err := NewPart(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := alone.Sequence().String(); got != "0,1/3,2/3,1" {
		t.Errorf("filled sequence %s", got)
	}
	in, err := NewPart(mustSequence(t, "0,1/3,2/3,1"), s)
	if err != nil {
		t.Fatal(err)
	}
	for n := int64(0); n < 100; n++ {
		if alone.Scale(n) != in.Scale(n) {
			t.Fatalf("Scale(%d): alone %d, in its sequence %d", n, alone.Scale(n), in.Scale(n))
		}
	}
	for _, tt := range []struct {
		seg  string
		want string
	}{{"0:1", "0,1"}, {"0:1/2", "0,1/2,1"}, {"1/2:1", "0,1/2,1"}} {
		s, _ := Parse(tt.seg)
		p, err := NewPart(nil, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Sequence().String(); got != tt.want {
			t.Errorf("%s alone: sequence %s, want %s", tt.seg, got, tt.want)
		}
	}
	whole, _ := NewPart(nil, Segment{From: new(big.Rat), To: big.NewRat(1, 1)})
	if whole.Scale(7) != 7 || !whole.Owns(5) {
		t.Error("0:1 is not the whole plan")
	}
}

func TestPartErrors(t *testing.T) {
	seq := mustSequence(t, "0,1/3,2/3,1")
	s, _ := Parse("0:1/2")
	if _, err := NewPart(seq, s); err == nil || !strings.Contains(err.Error(), "not one of the sequence's segments") {
		t.Errorf("segment outside the sequence: %v", err)
	}
	huge := mustSequence(t, "0,1/1000033,1/1000003,1")
	if _, err := NewPart(huge, huge[0]); err == nil || !strings.Contains(err.Error(), "common denominator") {
		t.Errorf("huge period: %v", err)
	}
}

func TestWholePart(t *testing.T) {
	var p Part
	if !p.Whole() || p.Scale(9) != 9 || !p.Owns(3) || p.Count(2, 5) != 3 || p.String() != "whole" {
		t.Error("the zero Part is not the whole plan")
	}
}

// Equal(n) is the sequence ParseSequence reads from 0,1/n,…,1.
func TestEqual(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{1, "0,1"},
		{2, "0,1/2,1"},
		{3, "0,1/3,2/3,1"},
		{4, "0,1/4,1/2,3/4,1"},
	}
	for _, tc := range tests {
		if got := Equal(tc.n).String(); got != tc.want {
			t.Errorf("Equal(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

// The largest run of instances divides its plan without the quadratic
// cost a sequence's string once had (500 MB allocated for 10,000 equal
// segments, written into each instance's __ENV).
func TestEqualAtTheMostInstances(t *testing.T) {
	const n = 10_000 // rendezvous.MaxInstances
	seq := Equal(n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := seq.String()
	runtime.ReadMemStats(&after)
	if !strings.HasPrefix(s, "0,1/10000,1/5000,") || !strings.HasSuffix(s, ",9999/10000,1") || strings.Count(s, ",") != n {
		t.Errorf("Equal(%d).String() = %.40s…", n, s)
	}
	// The string is 100 KB; its points' own strings and the builder's
	// growth a few times that.
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 16<<20 {
		t.Errorf("Equal(%d).String() allocated %d MB, want at most 16", n, allocated>>20)
	}
	if _, err := NewPart(seq, seq[n-1]); err != nil {
		t.Fatal(err)
	}
}
