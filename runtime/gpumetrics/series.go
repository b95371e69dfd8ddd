package gpumetrics

// series keeps at most max readings that span the whole run evenly. It
// keeps every stride-th reading (stride 1 at first), the newest one
// whatever its number, and every reading pinned (taken at a mark of the
// run). When it is full it doubles its stride and drops the readings off
// it, so that the oldest and the newest are kept at the same resolution.
type series struct {
	max     int
	stride  int
	next    int // the number of the next reading added
	entries []seriesEntry
}

type seriesEntry struct {
	reading Reading
	number  int
	pinned  bool
}

func newSeries(max int) *series {
	return &series{max: max, stride: 1}
}

func (s *series) kept(e seriesEntry) bool {
	return e.pinned || e.number%s.stride == 0
}

// add keeps r, pinned or not.
func (s *series) add(r Reading, pinned bool) {
	if n := len(s.entries); n > 0 && !s.kept(s.entries[n-1]) {
		s.entries = s.entries[:n-1] // kept only as the newest until now
	}
	for len(s.entries) >= s.max {
		s.stride *= 2
		s.drop()
		if len(s.entries) >= s.max { // more pins than room: pins give way
			for i := range s.entries {
				s.entries[i].pinned = false
			}
			s.drop()
		}
	}
	s.entries = append(s.entries, seriesEntry{reading: r, number: s.next, pinned: pinned})
	s.next++
}

// drop removes the entries no longer kept.
func (s *series) drop() {
	kept := s.entries[:0]
	for _, e := range s.entries {
		if s.kept(e) {
			kept = append(kept, e)
		}
	}
	clear(s.entries[len(kept):])
	s.entries = kept
}

// readings is a copy of the readings kept, oldest first.
func (s *series) readings() []Reading {
	out := make([]Reading, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.reading
	}
	return out
}
