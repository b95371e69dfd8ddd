package engines

import (
	dto "github.com/prometheus/client_model/go"
)

// Selection is where one figure is read in one exposition: the source that
// was found, its family, and the family's series that are the figure.
type Selection struct {
	Figure Figure
	Source Source
	Family *dto.MetricFamily
	// Series are the family's series carrying the source's Match labels
	// and the caller's filter; never none.
	Series []*dto.Metric
}

// Lookup finds a figure in a target's families: the first of the engine's
// sources whose family is exposed with the source's type and has series
// that match the source's labels and filter (a label filter such as
// {model_name: "m"}; nil for every series). A family whose series all miss
// the filter is passed over for the next source. It returns false when the
// engine does not serve the figure or the target exposes none of its
// sources. The text parser drops a family with no series, so a counter an
// engine has declared but never incremented (SGLang's cached tokens before
// the first hit) is not found until it is. A nil engine (Detect's "none")
// finds nothing.
func (e *Engine) Lookup(families map[string]*dto.MetricFamily, f Figure, filter map[string]string) (Selection, bool) {
	if e == nil {
		return Selection{}, false
	}
	for _, src := range e.Figures[f] {
		fam, ok := families[src.Name]
		if !ok || !typeFits(fam.GetType(), src.Kind) {
			continue
		}
		want := src.Filter(filter)
		var series []*dto.Metric
		for _, m := range fam.GetMetric() {
			if carries(m, want) {
				series = append(series, m)
			}
		}
		if len(series) == 0 {
			continue
		}
		return Selection{Figure: f, Source: src, Family: fam, Series: series}, true
	}
	return Selection{}, false
}

// typeFits says whether a family of type t can be read as kind k. A family
// the exposition left untyped may be a counter or a gauge.
func typeFits(t dto.MetricType, k Kind) bool {
	switch k {
	case Counter:
		return t == dto.MetricType_COUNTER || t == dto.MetricType_UNTYPED
	case Gauge:
		return t == dto.MetricType_GAUGE || t == dto.MetricType_UNTYPED
	case Histogram:
		return t == dto.MetricType_HISTOGRAM
	}
	return false
}

// Filter is the label filter that selects a figure's series in this
// source's family: the source's Match labels and the caller's, for code
// that reads series by family name and labels (the window math of
// runtime/servermetrics). The caller's labels do not override the
// source's.
func (src Source) Filter(filter map[string]string) map[string]string {
	all := make(map[string]string, len(src.Match)+len(filter))
	for k, v := range filter {
		all[k] = v
	}
	for k, v := range src.Match {
		all[k] = v
	}
	return all
}

func carries(m *dto.Metric, labels map[string]string) bool {
	for name, want := range labels {
		got := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				got = l.GetValue()
				break
			}
		}
		if got != want {
			return false
		}
	}
	return true
}

// Value is the value now of a figure read from a counter or a gauge, in the
// figure's unit: its series combined as the figure's definition says
// (summed, averaged or the largest) and scaled. A counter read from a
// histogram's sum reads that sum; Triton's cumulative latency counters read
// their total. It returns false for a figure read from a histogram, whose
// window math is runtime/servermetrics's, and for a Selection that Lookup
// did not return.
func (s Selection) Value() (float64, bool) {
	def, ok := Define(s.Figure)
	if !ok || (s.Source.Kind == Histogram && !s.Source.HistogramSum) {
		return 0, false
	}
	values := make([]float64, 0, len(s.Series))
	for _, m := range s.Series {
		values = append(values, s.Source.sample(m))
	}
	if len(values) == 0 {
		return 0, false
	}
	v := values[0]
	for _, x := range values[1:] {
		switch def.Combine {
		case Sum, Mean:
			v += x
		case Max:
			v = max(v, x)
		}
	}
	if def.Combine == Mean {
		v /= float64(len(values))
	}
	return v * s.Source.Scale, true
}

// sample is one series' raw value as the source reads it.
func (src Source) sample(m *dto.Metric) float64 {
	switch {
	case src.HistogramSum:
		return m.GetHistogram().GetSampleSum()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}
