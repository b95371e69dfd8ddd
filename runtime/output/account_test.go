package output

import (
	"fmt"
	"maps"
	"testing"
)

// An Account counts what was written and what was dropped by reason, its
// reasons bounded: past MaxDropReasons-1 distinct ones, drops go under
// its other label, while known reasons keep counting under their own.
func TestAccount(t *testing.T) {
	const other = "other causes (see the error)"
	tests := []struct {
		name        string
		do          func(a *Account)
		written     int64
		dropped     int64
		wantReasons map[string]int64
	}{
		{"nothing", func(*Account) {}, 0, 0, nil},
		{"written", func(a *Account) { a.Wrote(3); a.Wrote(4) }, 7, 0, nil},
		{"no drop counts nothing", func(a *Account) { a.Drop(0, "full"); a.Drop(-2, "full") }, 0, 0, nil},
		{"by reason", func(a *Account) {
			a.Wrote(1)
			a.Drop(2, "full")
			a.Drop(1, "disk full")
			a.Drop(3, "full")
		}, 1, 6, map[string]int64{"full": 5, "disk full": 1}},
		{"bounded", func(a *Account) {
			for i := range 40 {
				a.Drop(1, fmt.Sprint("error ", i))
			}
			a.Drop(2, "error 3") // known: its own count
		}, 0, 42, func() map[string]int64 {
			m := map[string]int64{other: 40 - (MaxDropReasons - 1)}
			for i := range MaxDropReasons - 1 {
				m[fmt.Sprint("error ", i)] = 1
			}
			m["error 3"] = 3
			return m
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Account{Other: other}
			tt.do(a)
			rep := a.Report()
			if rep.Written != tt.written || rep.Dropped != tt.dropped || !maps.Equal(rep.Reasons, tt.wantReasons) {
				t.Errorf("report %+v; want %d written, %d dropped, reasons %v", rep, tt.written, tt.dropped, tt.wantReasons)
			}
			// The report is a copy: a later drop does not change it.
			a.Drop(1, "later")
			if rep.Reasons["later"] != 0 || rep.Dropped != tt.dropped {
				t.Errorf("a drop after Report changed the report: %+v", rep)
			}
		})
	}
}
