package engine

import (
	"context"
	"strings"
	"testing"
)

// TestThrowingExportGetters checks that an export whose getter throws is
// reported with the script's own error, not taken for a missing function.
func TestThrowingExportGetters(t *testing.T) {
	throwing := func(name string) string {
		return "Object.defineProperty(exports, '" + name + "', {get() { throw new Error('no " + name + "') }});\n"
	}
	const fn = "exports.default = function () {};\n"
	want := func(name string) string { return `reading the export "` + name + `": Error: no ` + name }

	if _, err := Load(t.Context(), testConfig(t, throwing("default"), nil, nil)); err == nil || !strings.Contains(err.Error(), want("default")) {
		t.Errorf("Load error = %v, want %q", err, want("default"))
	}
	for _, name := range []string{"setup", "teardown"} {
		e := load(t, testConfig(t, fn+throwing(name), nil, nil))
		if _, err := runBounded(t, t.Context(), e); err == nil || !strings.Contains(err.Error(), want(name)) {
			t.Errorf("Run error = %v, want %q", err, want(name))
		}
	}
	e := load(t, testConfig(t, fn+throwing(handleSummaryFn), nil, nil))
	if _, err := e.HandleSummary(context.Background(), []byte(`{}`)); err == nil || !strings.Contains(err.Error(), want(handleSummaryFn)) {
		t.Errorf("HandleSummary error = %v, want %q", err, want(handleSummaryFn))
	}
}
