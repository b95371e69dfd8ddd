package modules

import (
	"slices"
	"strings"
	"testing"
)

// nothing is a module without exports.
type nothing struct{}

func (nothing) NewInstance(VU) (Instance, error) { return nil, nil }

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	for _, name := range []string{"llm", "llmrun/config", "data", "a-b_2"} {
		if err := r.Register(name, nothing{}); err != nil {
			t.Errorf("Register(%q): %v", name, err)
		}
	}
	tests := []struct {
		name string
		m    Module
		want string
	}{
		{"llm", nothing{}, "registered twice"},
		{"", nothing{}, "bare lower-case import path"},
		{"./llm", nothing{}, "bare lower-case import path"},
		{"/llm", nothing{}, "bare lower-case import path"},
		{"LLM", nothing{}, "bare lower-case import path"},
		{"llm/", nothing{}, "bare lower-case import path"},
		{"a b", nothing{}, "bare lower-case import path"},
		{"other", nil, "nil module"},
	}
	for _, tc := range tests {
		if err := r.Register(tc.name, tc.m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%q): error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	if got, want := r.Names(), []string{"a-b_2", "data", "llm", "llmrun/config"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	if m, ok := r.Lookup("llmrun/config"); !ok || m != (nothing{}) {
		t.Errorf("Lookup(llmrun/config) = %v, %v", m, ok)
	}
	if _, ok := r.Lookup("other"); ok {
		t.Error("Lookup found a module that failed to register")
	}
	var none *Registry
	if _, ok := none.Lookup("llm"); ok || none.Names() != nil {
		t.Error("a nil registry holds modules")
	}
}
