package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// What `llmrun version` says of builds as go build records them (the
// settings below are those `go version -m` shows of a build of this
// module in a git checkout).
func TestVersionText(t *testing.T) {
	t.Parallel()
	goLine := "built with " + runtime.Version() + " for " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	checkout := func(modified string) *debug.BuildInfo {
		return &debug.BuildInfo{
			Main: debug.Module{Path: "github.com/llmrun/llmrun", Version: "v0.0.0-20261205110007-d62c1157cbd1"},
			Settings: []debug.BuildSetting{
				{Key: "-buildmode", Value: "exe"},
				{Key: "vcs", Value: "git"},
				{Key: "vcs.revision", Value: "d62c1157cbd19be26b202c7b359bddaecf483db5"},
				{Key: "vcs.time", Value: "2026-12-05T11:00:07Z"},
				{Key: "vcs.modified", Value: modified},
			},
		}
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"a release", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "llmrun v1.4.0\n" + goLine},
		{"a commit", checkout("false"),
			"llmrun v0.0.0-20261205110007-d62c1157cbd1\ncommit d62c1157cbd19be26b202c7b359bddaecf483db5 (2026-12-05T11:00:07Z)\n" + goLine},
		{"a commit with changes", checkout("true"),
			"llmrun v0.0.0-20261205110007-d62c1157cbd1\ncommit d62c1157cbd19be26b202c7b359bddaecf483db5 (2026-12-05T11:00:07Z, with uncommitted changes)\n" + goLine},
		{"no version recorded (-buildvcs=false)", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "llmrun dev\n" + goLine},
		{"no build info", nil, "llmrun dev\n" + goLine},
	} {
		if got := versionText(tc.bi); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}
