package architecture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// module is llmrun's module path; the rules name its packages without it.
const module = "github.com/llmrun/llmrun"

// The rules' names, as the failures give them.
const (
	ruleEngine  = "the engine imports no consumer of a run"
	ruleSummary = "the result document depends on no JavaScript, engine or module but metrics"
	ruleModules = "modules import nothing of runtime/ but runtime/js/jsvalue"
	ruleLLM     = "modules/llm depends on no JavaScript"
	ruleCmd     = "cmd/llmrun imports only library entry points"
	ruleMain    = "nothing imports a package main or bench/"
)

// cmdEntryPoints are the packages cmd/llmrun may import: each the library
// call of a subcommand, or what only a process's main can do.
var cmdEntryPoints = []string{
	"runtime/runner",         // llmrun run: the run pipeline (and the script's load, for inspect and kube)
	"runtime/runflags",       // llmrun run, inspect and kube: the command line of a run, read
	"runtime/inspect",        // llmrun inspect: the resolved plan, printed
	"runtime/vllmbench",      // llmrun bench
	"runtime/results",        // llmrun merge, trend, report, compare: reading, merging and judging results
	"runtime/kube",           // llmrun kube: the manifests
	"runtime/kube/kuberun",   // llmrun kube: its flags, and the run in each pod
	"internal/llmsim",        // llmrun sim
	"runtime/exitcode",       // main: an outcome to the process's exit code, the one table
	"runtime/gctune",         // main: the collector's heap goal, set process-wide at start
	"runtime/output/console", // main: the terminal, the screen the live view and the warnings share, and whether stdout takes colours
	"scripts",                // the stock scenarios' names, as the command line spells them
	"runtime/spelling",       // the command or flag a mistyped one probably meant
	"runtime/llmconfig",      // the exit code of a target that cannot be resolved (bench's, as run's)
	"modules/typings",        // llmrun types: the script API's TypeScript declarations, printed or written

	"runtime/output/dashboard", // llmrun dashboard replay and report: a recording read and served, or written as one HTML file
}

// rules are the dependency rules of docs/architecture.md.
var rules = []rule{
	{ruleEngine, in("runtime/engine/..."), reachesNone(in(
		"runtime/summary/...", "runtime/summarize/...", "runtime/timeline/...", "runtime/output/...",
		"runtime/report/...", "runtime/regression/...", "runtime/results/...", "runtime/capacity/...",
		"runtime/runner/...",
	))},
	{ruleSummary, in("runtime/summary/..."), reachesNone(in(
		"github.com/dop251/goja/...", "github.com/evanw/esbuild/...", "runtime/engine/...", "modules/...",
	).except("modules/metrics"))},
	{ruleModules, in("modules/..."), reachesNone(in("runtime/...").except("runtime/js/jsvalue"))},
	{ruleLLM, in("modules/llm/...").except("modules/llm/llmjs/..."), reachesNone(in(
		"github.com/dop251/goja/...", "github.com/evanw/esbuild/...",
	))},
	{ruleCmd, in("cmd/llmrun"), importsOnly(in(cmdEntryPoints...))},
	{ruleMain, in("..."), importsNoMainNorBench},
}

// A rule is one dependency rule: the packages it is about, and what it
// finds wrong with one of them, each violation an import chain.
type rule struct {
	name  string
	from  set
	check func(g graph, pkg string) []string
}

// A set of packages: patterns relative to the module ("runtime/output/..."
// is the package and all below it, "..." the whole module) or, when the
// first element has a dot, full import paths, less its exceptions.
type set struct{ patterns, exceptions []string }

func in(patterns ...string) set { return set{patterns: patterns} }

func (s set) except(patterns ...string) set {
	s.exceptions = append(slices.Clip(s.exceptions), patterns...)
	return s
}

func (s set) has(path string) bool {
	return matchesAny(path, s.patterns) && !matchesAny(path, s.exceptions)
}

func matchesAny(path string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(path, p) })
}

func matches(path, pattern string) bool {
	pattern = fullPath(pattern)
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

// reachesNone: the package imports nothing of forbidden, directly or
// through other packages. Each forbidden package reached is one
// violation, named by the shortest chain to it; the search does not go on
// through it, so a violation is named once, by its first forbidden step.
func reachesNone(forbidden set) func(graph, string) []string {
	return func(g graph, from string) []string {
		parent := map[string]string{from: ""}
		queue := []string{from}
		var found []string
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, imp := range g.imports(p) {
				if _, seen := parent[imp]; seen {
					continue
				}
				parent[imp] = p
				if forbidden.has(imp) {
					found = append(found, chain(parent, imp))
					continue
				}
				queue = append(queue, imp)
			}
		}
		return found
	}
}

// chain spells the path by which parent reached to.
func chain(parent map[string]string, to string) string {
	var steps []string
	for p := to; p != ""; p = parent[p] {
		steps = append(steps, short(p))
	}
	slices.Reverse(steps)
	return strings.Join(steps, " → ")
}

func short(path string) string {
	return strings.TrimPrefix(path, module+"/")
}

// importsOnly: of the module's packages, the package imports (in its
// non-test code) only those allowed.
func importsOnly(allowed set) func(graph, string) []string {
	return func(g graph, from string) []string {
		var found []string
		for _, imp := range g.imports(from) {
			if g.inModule(imp) && !allowed.has(imp) {
				found = append(found, short(from)+" → "+short(imp)+" (not a library entry point)")
			}
		}
		return found
	}
}

// importsNoMainNorBench: the package, its tests included, imports no
// package main, and nothing under bench/ unless it is under bench/ itself.
func importsNoMainNorBench(g graph, from string) []string {
	bench := in("bench/...")
	var found []string
	for _, imp := range g.allImports(from) {
		switch p := g[imp]; {
		case imp == from || p == nil || !g.inModule(imp):
		case p.Name == "main":
			found = append(found, short(from)+" → "+short(imp)+" (package main)")
		case bench.has(imp) && !bench.has(from):
			found = append(found, short(from)+" → "+short(imp)+" (bench/ is the benchmarks', not the library's)")
		}
	}
	return found
}

// A graph is what `go list -deps -json` reports: every package of the
// module and every package they depend on, by import path.
type graph map[string]*pkg

type pkg struct {
	ImportPath   string
	Name         string
	Dir          string
	Standard     bool
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func (g graph) imports(path string) []string {
	if p := g[path]; p != nil {
		return p.Imports
	}
	return nil
}

// allImports are the imports of a package and of its tests.
func (g graph) allImports(path string) []string {
	p := g[path]
	if p == nil {
		return nil
	}
	all := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
	slices.Sort(all)
	return slices.Compact(all)
}

func (g graph) inModule(path string) bool {
	return path == module || strings.HasPrefix(path, module+"/")
}

// packages are the module's packages in s, sorted.
func (g graph) packages(s set) []string {
	var out []string
	for path := range g {
		if g.inModule(path) && s.has(path) {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out
}

// violations are a rule's violations over every package it is about.
func (g graph) violations(r rule) []string {
	var out []string
	for _, p := range g.packages(r.from) {
		out = append(out, r.check(g, p)...)
	}
	return out
}

// loadGraph runs `go list -deps -json ./...` from the module's root once
// for all the tests.
var loadGraph = sync.OnceValues(func() (graph, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Name,Dir,Standard,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps -json ./... in %s: %w\n%s", root, err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		g[p.ImportPath] = &p
	}
	if len(g.packages(in("..."))) == 0 {
		return nil, fmt.Errorf("go list in %s listed no package of %s", root, module)
	}
	if err := g.readSources(); err != nil {
		return nil, err
	}
	return g, nil
})

// readSources stats every file of the module's packages from this
// process. go list reads them in a process of its own, which go test's
// cache does not watch: without this, a changed import would leave the
// test's cached pass standing.
func (g graph) readSources() error {
	for _, path := range g.packages(in("...")) {
		entries, err := os.ReadDir(g[path].Dir)
		if err != nil {
			return fmt.Errorf("package %s: %w", path, err)
		}
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(g[path].Dir, e.Name())); err != nil {
				return fmt.Errorf("package %s: %w", path, err)
			}
		}
	}
	return nil
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(gomod))), nil
}

func mustGraph(t *testing.T) graph {
	t.Helper()
	g, err := loadGraph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDependencyRules checks each rule over the module's import graph.
func TestDependencyRules(t *testing.T) {
	g := mustGraph(t)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			for _, pattern := range r.from.patterns {
				if len(g.packages(in(pattern))) == 0 {
					t.Errorf("no package of the module matches %q: the rule checks nothing there", pattern)
				}
			}
			if found := g.violations(r); len(found) > 0 {
				t.Errorf("broken (see docs/architecture.md) by:\n%s", strings.Join(found, "\n"))
			}
		})
	}
}

// TestRulesCatchAViolation plants one import that breaks each rule in the
// module's real graph: the rule names it by its chain.
func TestRulesCatchAViolation(t *testing.T) {
	for _, tc := range []struct {
		rule               string
		importer, imported string // module-relative, or a full path with a dot
		test               bool   // a test's import
		want               string
	}{
		{ruleEngine, "runtime/engine", "runtime/output/console", false, "runtime/engine → runtime/output/console"},
		{ruleEngine, "runtime/threshold", "runtime/summary", false, "runtime/engine → runtime/threshold → runtime/summary"},
		{ruleSummary, "runtime/summary", "runtime/engine", false, "runtime/summary → runtime/engine"},
		{ruleSummary, "runtime/summary", "github.com/dop251/goja", false, "runtime/summary → github.com/dop251/goja"},
		{ruleModules, "modules/data", "runtime/threshold", false, "modules/data → runtime/threshold"},
		{ruleLLM, "modules/llm", "github.com/evanw/esbuild/pkg/api", false, "modules/llm → github.com/evanw/esbuild/pkg/api"},
		{ruleCmd, "cmd/llmrun", "runtime/threshold", false, "cmd/llmrun → runtime/threshold (not a library entry point)"},
		{ruleMain, "runtime/runner", "cmd/llmrun", true, "runtime/runner → cmd/llmrun (package main)"},
		{ruleMain, "runtime/runner", "bench/internal/simproc", false, "runtime/runner → bench/internal/simproc (bench/ is the benchmarks', not the library's)"},
	} {
		t.Run(tc.rule+": "+tc.want, func(t *testing.T) {
			base := mustGraph(t)
			importer, imported := fullPath(tc.importer), fullPath(tc.imported)
			if base[importer] == nil || base[imported] == nil {
				t.Fatalf("%s or %s is not in the module's graph", importer, imported)
			}
			g := maps.Clone(base)
			planted := *base[importer]
			if tc.test {
				planted.TestImports = append(slices.Clip(planted.TestImports), imported)
			} else {
				planted.Imports = append(slices.Clip(planted.Imports), imported)
			}
			g[importer] = &planted
			i := slices.IndexFunc(rules, func(r rule) bool { return r.name == tc.rule })
			if i < 0 {
				t.Fatalf("no rule %q", tc.rule)
			}
			if found := g.violations(rules[i]); !slices.Contains(found, tc.want) {
				t.Errorf("with %s importing %s, the rule found:\n%s\nwant among them: %s", tc.importer, tc.imported, strings.Join(found, "\n"), tc.want)
			}
		})
	}
}

// fullPath is the import path of a pattern relative to the module, and
// a full one (its first element has a dot) as it is.
func fullPath(p string) string {
	if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") && first != "..." {
		return p
	}
	return module + "/" + p
}
