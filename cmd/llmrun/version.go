package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// buildVersion is set at link time (-ldflags "-X main.buildVersion=v1.2.3").
var buildVersion string

// version is the link-time version, else the module version Go recorded
// (a release tag, or the pseudo-version go build makes from the checkout's
// commit), else "dev". Result files and InfluxDB points carry it.
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionText is what `llmrun version` prints: the version, the commit and
// its time when the build recorded them (go build in a git checkout, unless
// -buildvcs=false), and the Go version and platform it was built with.
func versionText(bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "llmrun %s\n", versionOf(bi))
	vcs := map[string]string{}
	if bi != nil {
		for _, s := range bi.Settings {
			vcs[s.Key] = s.Value
		}
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		modified := ""
		if vcs["vcs.modified"] == "true" {
			modified = ", with uncommitted changes"
		}
		fmt.Fprintf(&b, "commit %s (%s%s)\n", rev, vcs["vcs.time"], modified)
	}
	fmt.Fprintf(&b, "built with %s for %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}
