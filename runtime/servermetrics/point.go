package servermetrics

import (
	dto "github.com/prometheus/client_model/go"
)

// maxShared bounds what an interner holds: a server whose label values
// change at every scrape (an id) would make it grow without end.
const maxShared = 100_000

// interner holds once what the points of a series repeat at every
// scrape: the families' names and types and the metrics' label sets. A
// point then costs its values, about half of what the parsed snapshot
// held.
type interner struct {
	names  map[string]*string
	types  map[dto.MetricType]*dto.MetricType
	labels map[string][]*dto.LabelPair
}

// point is snap as a series keeps it: the families named in names (nil:
// the counters, gauges and untyped ones), without their help texts, their
// names and label sets shared with the other points.
func (in *interner) point(snap Snapshot, names []string) Snapshot {
	out := Snapshot{Time: snap.Time, Families: make(map[string]*dto.MetricFamily, len(names))}
	for name, f := range snap.Families {
		if kept(f, names) {
			out.Families[in.name(name)] = in.family(f)
		}
	}
	return out
}

// kept reports whether a series keeps f.
func kept(f *dto.MetricFamily, names []string) bool {
	if names != nil {
		for _, name := range names {
			if name == f.GetName() {
				return true
			}
		}
		return false
	}
	switch f.GetType() {
	case dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_UNTYPED:
		return true
	}
	return false
}

// family is f with its name, type and label sets shared, and no help.
func (in *interner) family(f *dto.MetricFamily) *dto.MetricFamily {
	out := &dto.MetricFamily{Name: in.namePtr(f.GetName()), Type: in.typePtr(f.GetType()), Metric: make([]*dto.Metric, len(f.GetMetric()))}
	for i, m := range f.GetMetric() {
		out.Metric[i] = &dto.Metric{
			Label:     in.labelSet(m),
			Counter:   m.GetCounter(),
			Gauge:     m.GetGauge(),
			Untyped:   m.GetUntyped(),
			Histogram: m.GetHistogram(),
			Summary:   m.GetSummary(),
		}
	}
	return out
}

// full reports whether the interner holds all it may.
func (in *interner) full() bool {
	return len(in.names)+len(in.labels) >= maxShared
}

// name is name, held once.
func (in *interner) name(name string) string {
	return *in.namePtr(name)
}

// namePtr is a pointer to name, one for all points.
func (in *interner) namePtr(name string) *string {
	if p, ok := in.names[name]; ok {
		return p
	}
	p := &name
	if !in.full() {
		if in.names == nil {
			in.names = map[string]*string{}
		}
		in.names[name] = p
	}
	return p
}

// typePtr is a pointer to t, one for all points.
func (in *interner) typePtr(t dto.MetricType) *dto.MetricType {
	if p, ok := in.types[t]; ok {
		return p
	}
	if in.types == nil {
		in.types = map[dto.MetricType]*dto.MetricType{}
	}
	p := t.Enum()
	in.types[t] = p
	return p
}

// labelSet is m's labels, one slice for all points that have them.
func (in *interner) labelSet(m *dto.Metric) []*dto.LabelPair {
	if len(m.GetLabel()) == 0 {
		return nil
	}
	key := labelKey(m)
	if pairs, ok := in.labels[key]; ok {
		return pairs
	}
	pairs := m.GetLabel()
	if !in.full() {
		if in.labels == nil {
			in.labels = map[string][]*dto.LabelPair{}
		}
		in.labels[key] = pairs
	}
	return pairs
}
