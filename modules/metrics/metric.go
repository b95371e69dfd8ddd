// Package metrics holds llmrun's metric model: the four metric types
// (Counter, Gauge, Rate, Trend), tag sets, samples, a registry of metric
// definitions and a sharded aggregator that turns samples into summary
// statistics with HDR histograms, in bounded memory whatever the run length.
//
// The package is plain Go and knows nothing about JavaScript; package
// metricsjs is the thin binding that exposes custom metrics to scripts.
package metrics

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Type is the kind of a metric; it decides how samples are aggregated.
type Type int

// The metric types, with k6's semantics.
const (
	// Counter adds values up: a count and a rate per second.
	Counter Type = iota
	// Gauge keeps the last value, with its min and max.
	Gauge
	// Rate counts how many values were non-zero: a ratio.
	Rate
	// Trend keeps a distribution: mean, min, max and percentiles.
	Trend
)

var typeNames = [...]string{Counter: "counter", Gauge: "gauge", Rate: "rate", Trend: "trend"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// ValueType says what a metric's values measure, for display.
type ValueType int

// Value types.
const (
	// Default values are plain numbers.
	Default ValueType = iota
	// Time values are durations in milliseconds.
	Time
	// Data values are sizes in bytes.
	Data
)

func (v ValueType) String() string {
	switch v {
	case Time:
		return "time"
	case Data:
		return "data"
	default:
		return "default"
	}
}

// Metric is a registered metric definition. Samples point at it; it is
// immutable after registration and safe to share between goroutines.
type Metric struct {
	Name     string
	Type     Type
	Contains ValueType
	// Desc is a one-line description shown in docs and exports.
	Desc string
	// Unit names the unit of a value ("ms", "tokens", "requests").
	Unit string
	// Custom marks a metric a script defined (new Counter(...) and the
	// like); every metric llmrun registers itself is built-in. A
	// registration that finds the name taken keeps the first definition's
	// mark: a script that names a built-in metric feeds it.
	Custom bool
}

var metricNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.]{0,127}$`)

// Registry holds the metric definitions of one run. Registering the same name
// twice with the same type returns the first definition, so every VU can
// register its custom metrics in the init context.
type Registry struct {
	mu      sync.RWMutex
	metrics map[string]*Metric
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{metrics: make(map[string]*Metric)}
}

// Register adds a metric definition, or returns the existing one when a
// metric of that name and type exists. A name reused with another type, or a
// name that is not a valid identifier, is an error.
func (r *Registry) Register(m Metric) (*Metric, error) {
	if !metricNameRE.MatchString(m.Name) {
		return nil, fmt.Errorf("invalid metric name %q: use letters, digits, '_' and '.', starting with a letter or '_', at most 128 characters", m.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.metrics[m.Name]; ok {
		if old.Type != m.Type || old.Contains != m.Contains {
			return nil, fmt.Errorf("metric %q is already registered as a %s of %s values, cannot register it as a %s of %s values",
				m.Name, old.Type, old.Contains, m.Type, m.Contains)
		}
		return old, nil
	}
	def := m
	r.metrics[m.Name] = &def
	return &def, nil
}

// MustRegister is Register for built-in metrics whose definitions are known
// to be valid; it panics on error, which is a programming error.
func (r *Registry) MustRegister(m Metric) *Metric {
	def, err := r.Register(m)
	if err != nil {
		panic(err)
	}
	return def
}

// Get returns the metric of that name, or nil.
func (r *Registry) Get(name string) *Metric {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.metrics[name]
}

// All returns every registered metric, sorted by name.
func (r *Registry) All() []*Metric {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Metric, 0, len(r.metrics))
	for _, m := range r.metrics {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Tag is one key/value pair of a TagSet.
type Tag struct{ Key, Value string }

// TagSet is an immutable, sorted set of tags with a precomputed key, so it can
// be shared by many samples and used as a map key cheaply. The nil *TagSet is
// the empty set.
type TagSet struct {
	tags []Tag
	key  string
}

// NewTagSet builds a tag set from a map.
func NewTagSet(m map[string]string) *TagSet {
	if len(m) == 0 {
		return nil
	}
	tags := make([]Tag, 0, len(m))
	for k, v := range m {
		tags = append(tags, Tag{k, v})
	}
	return fromTags(tags)
}

func fromTags(tags []Tag) *TagSet {
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
	var b strings.Builder
	for i, t := range tags {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t.Key)
		b.WriteByte(':')
		b.WriteString(t.Value)
	}
	return &TagSet{tags: tags, key: b.String()}
}

// With returns a new set with the given tags added or replaced; the receiver
// is unchanged.
func (s *TagSet) With(kv ...string) *TagSet {
	if len(kv)%2 != 0 {
		panic("metrics: TagSet.With needs key/value pairs")
	}
	m := s.Map()
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return NewTagSet(m)
}

// Merge returns a new set holding the receiver's tags overridden by other's.
func (s *TagSet) Merge(other *TagSet) *TagSet {
	if other == nil || len(other.tags) == 0 {
		return s
	}
	if s == nil || len(s.tags) == 0 {
		return other
	}
	m := s.Map()
	for _, t := range other.tags {
		m[t.Key] = t.Value
	}
	return NewTagSet(m)
}

// Get returns the value of a tag and whether it is set.
func (s *TagSet) Get(key string) (string, bool) {
	if s == nil {
		return "", false
	}
	for _, t := range s.tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return "", false
}

// Map returns a fresh copy of the tags as a map.
func (s *TagSet) Map() map[string]string {
	m := make(map[string]string)
	if s != nil {
		for _, t := range s.tags {
			m[t.Key] = t.Value
		}
	}
	return m
}

// Tags returns the tags, sorted by key. The slice must not be modified.
func (s *TagSet) Tags() []Tag {
	if s == nil {
		return nil
	}
	return s.tags
}

// Key is a canonical string of the set ("k1:v1,k2:v2"), "" for the empty set.
func (s *TagSet) Key() string {
	if s == nil {
		return ""
	}
	return s.key
}

// Contains reports whether every tag of sub is in s with the same value.
func (s *TagSet) Contains(sub *TagSet) bool {
	for _, t := range sub.Tags() {
		if v, ok := s.Get(t.Key); !ok || v != t.Value {
			return false
		}
	}
	return true
}

// Sample is one observation of a metric. Trend values of Time metrics are in
// milliseconds.
type Sample struct {
	Metric *Metric
	Tags   *TagSet
	Time   time.Time
	Value  float64
	// Weight is how many samples of Value this one stands for (a
	// request's inter-token gaps folded into buckets); 0 means 1.
	Weight int64
}

// count is how many samples s stands for.
func (s *Sample) count() int64 { return max(s.Weight, 1) }

// Sink receives samples. Implementations never block the caller for longer
// than a short uncontended lock; the slice may be reused by the caller after
// the call returns.
type Sink interface {
	AddSamples(samples []Sample)
}
