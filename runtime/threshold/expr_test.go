package threshold

import "testing"

func TestParseExpression(t *testing.T) {
	tests := []struct {
		src  string
		want Expression
	}{
		{"avg<500", Expression{MethodAvg, 0, OpLess, 500}},
		{"min<=1", Expression{MethodMin, 0, OpLessEqual, 1}},
		{"max>2", Expression{MethodMax, 0, OpGreater, 2}},
		{"med>=3", Expression{MethodMed, 50, OpGreaterEqual, 3}},
		{"count==4", Expression{MethodCount, 0, OpEqual, 4}},
		{"rate===0.5", Expression{MethodRate, 0, OpStrictEqual, 0.5}},
		{"value!=6", Expression{MethodValue, 0, OpNotEqual, 6}},
		{"p(95)<500", Expression{MethodPercentile, 95, OpLess, 500}},
		{"p(99.9)<=1.5", Expression{MethodPercentile, 99.9, OpLessEqual, 1.5}},
		{"p(0)>0", Expression{MethodPercentile, 0, OpGreater, 0}},
		{"p(100)<1e3", Expression{MethodPercentile, 100, OpLess, 1000}},
		{"p(.5)<1", Expression{MethodPercentile, 0.5, OpLess, 1}},
		// whitespace anywhere between the parts
		{"  p( 95 ) <  500 ", Expression{MethodPercentile, 95, OpLess, 500}},
		{"p (90)<1", Expression{MethodPercentile, 90, OpLess, 1}},
		{"\tavg\t>=\t10\n", Expression{MethodAvg, 0, OpGreaterEqual, 10}},
		// numbers: sign, fraction, exponent
		{"value>-5", Expression{MethodValue, 0, OpGreater, -5}},
		{"value >= -0.25", Expression{MethodValue, 0, OpGreaterEqual, -0.25}},
		{"value<+7", Expression{MethodValue, 0, OpLess, 7}},
		{"rate<1E-2", Expression{MethodRate, 0, OpLess, 0.01}},
		{"rate<2.5e+1", Expression{MethodRate, 0, OpLess, 25}},
		{"avg<.5", Expression{MethodAvg, 0, OpLess, 0.5}},
		{"avg<5.", Expression{MethodAvg, 0, OpLess, 5}},
		{"value==-1e-3", Expression{MethodValue, 0, OpEqual, -0.001}},
	}
	for _, tt := range tests {
		got, err := ParseExpression(tt.src)
		if err != nil {
			t.Errorf("ParseExpression(%q): %v", tt.src, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseExpression(%q) = %+v, want %+v", tt.src, got, tt.want)
		}
	}
}

func TestExpressionString(t *testing.T) {
	for src, want := range map[string]string{
		" p( 99.9 ) <= 1e3 ": "p(99.9)<=1000",
		"med === 2":          "med===2",
		"rate < 0.01":        "rate<0.01",
	} {
		e, err := ParseExpression(src)
		if err != nil {
			t.Fatal(err)
		}
		if e.String() != want {
			t.Errorf("%q: String() = %q, want %q", src, e.String(), want)
		}
	}
}

func TestParseExpressionErrors(t *testing.T) {
	const (
		wantAgg = "want avg, min, max, med, count, rate, value or p(N)"
		wantOp  = "want <, <=, >, >=, ==, === or !="
	)
	tests := []struct{ src, err string }{
		{"", "empty threshold expression"},
		{"   ", "empty threshold expression"},
		{"p(95)", `no comparison operator in "p(95)": ` + wantOp},
		{"p(95) 500", `no comparison operator in "p(95) 500": ` + wantOp},
		{"p95<500", `unknown aggregation "p95", ` + wantAgg},
		{"P(95)<500", `unknown aggregation "P(95)", ` + wantAgg},
		{"average<500", `unknown aggregation "average", ` + wantAgg},
		{"p<500", `unknown aggregation "p", ` + wantAgg},
		{"avg count<5", `unknown aggregation "avg count", ` + wantAgg},
		{"<500", `missing aggregation before "<" in "<500": ` + wantAgg},
		{"p(95)=500", `unknown operator "=" in "p(95)=500": ` + wantOp},
		{"p(95)=>500", `unknown operator "=>" in "p(95)=>500": ` + wantOp},
		{"p(95)<>500", `unknown operator "<>" in "p(95)<>500": ` + wantOp},
		{"p(95)<<500", `unknown operator "<<" in "p(95)<<500": ` + wantOp},
		{"rate!==0", `unknown operator "!==" in "rate!==0": ` + wantOp},
		{"rate!0", `unknown operator "!" in "rate!0": ` + wantOp},
		{"p(95)<", `missing number after "<" in "p(95)<": want a number, like 500 or 0.01`},
		{"p(95) <=  ", `missing number after "<=" in "p(95) <=": want a number, like 500 or 0.01`},
		{"p(95)<abc", `invalid number "abc" in "p(95)<abc": want a number, like 500, 0.01 or 1e3`},
		{"p(95)<500ms", `invalid number "500ms" in "p(95)<500ms": want a number, like 500, 0.01 or 1e3`},
		{"p(95)<1_000", `invalid number "1_000" in "p(95)<1_000": want a number, like 500, 0.01 or 1e3`},
		{"p(95)<0x10", `invalid number "0x10" in "p(95)<0x10": want a number, like 500, 0.01 or 1e3`},
		{"p(95)<Inf", `invalid number "Inf" in "p(95)<Inf": want a number, like 500, 0.01 or 1e3`},
		{"p(95)<NaN", `invalid number "NaN" in "p(95)<NaN": want a number, like 500, 0.01 or 1e3`},
		{"p(95)<1e999", `invalid number "1e999" in "p(95)<1e999": want a number, like 500, 0.01 or 1e3`},
		{"p(95)<- 5", `invalid number "- 5" in "p(95)<- 5": want a number, like 500, 0.01 or 1e3`},
		{"p(95)<5<6", `invalid number "5<6" in "p(95)<5<6": want a number, like 500, 0.01 or 1e3`},
		{"avg<1e", `invalid number "1e" in "avg<1e": want a number, like 500, 0.01 or 1e3`},
		{"p(101)<5", `invalid percentile "p(101)": want p(N) with N a number from 0 to 100, like p(95) or p(99.9)`},
		{"p(-1)<5", `invalid percentile "p(-1)": want p(N) with N a number from 0 to 100, like p(95) or p(99.9)`},
		{"p()<5", `invalid percentile "p()": want p(N) with N a number from 0 to 100, like p(95) or p(99.9)`},
		{"p(abc)<5", `invalid percentile "p(abc)": want p(N) with N a number from 0 to 100, like p(95) or p(99.9)`},
		{"p(95<5", `invalid percentile "p(95": want p(N) with N a number from 0 to 100, like p(95) or p(99.9)`},
		{"p(9 5)<5", `invalid percentile "p(9 5)": want p(N) with N a number from 0 to 100, like p(95) or p(99.9)`},
	}
	for _, tt := range tests {
		_, err := ParseExpression(tt.src)
		if err == nil {
			t.Errorf("ParseExpression(%q): no error, want %q", tt.src, tt.err)
			continue
		}
		if err.Error() != tt.err {
			t.Errorf("ParseExpression(%q):\n got %s\nwant %s", tt.src, err, tt.err)
		}
	}
}

func TestOperatorCompare(t *testing.T) {
	// For observed below, equal to and above the bound.
	truth := map[Operator][3]bool{
		OpLess:         {true, false, false},
		OpLessEqual:    {true, true, false},
		OpGreater:      {false, false, true},
		OpGreaterEqual: {false, true, true},
		OpEqual:        {false, true, false},
		OpStrictEqual:  {false, true, false},
		OpNotEqual:     {true, false, true},
	}
	for op, want := range truth {
		for i, observed := range []float64{1, 2, 3} {
			if got := op.Compare(observed, 2); got != want[i] {
				t.Errorf("%v %s 2 = %v, want %v", observed, op, got, want[i])
			}
		}
	}
	if Operator("~").Compare(1, 1) {
		t.Error("an unknown operator must not hold")
	}
}
