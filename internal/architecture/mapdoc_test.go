package architecture

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// archDoc is the map of the code the tests below hold to the tree.
const archDoc = "../../docs/architecture.md"

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	goFilePath = regexp.MustCompile(`^[\w.-]+(/[\w.-]+)+\.go$`)
)

// mapTablePackages are the packages the first column of the map's
// "## Packages" table names, each as often as it names it.
func mapTablePackages(doc string) []string {
	_, section, _ := strings.Cut(doc, "\n## Packages\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var named []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.TrimSpace(cells[0]) != "" {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			named = append(named, m[1])
		}
	}
	return named
}

func readArchDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMapNamesEveryPackage: the map's package table names every package
// of `go list ./...` once, and no package that is not one.
func TestMapNamesEveryPackage(t *testing.T) {
	g := mustGraph(t)
	named := mapTablePackages(readArchDoc(t))
	if len(named) == 0 {
		t.Fatalf("%s: no package read from the first column of the table under \"## Packages\"", archDoc)
	}
	var packages []string
	for _, p := range g.packages(in("...")) {
		packages = append(packages, short(p))
	}
	times := map[string]int{}
	for _, p := range named {
		times[p]++
	}
	for _, p := range packages {
		switch n := times[p]; {
		case n == 0:
			t.Errorf("%s: package %s is missing from the table under \"## Packages\"", archDoc, p)
		case n > 1:
			t.Errorf("%s: package %s is named %d times in the table under \"## Packages\", want once", archDoc, p, n)
		}
	}
	for _, p := range named {
		if !slices.Contains(packages, p) {
			t.Errorf("%s: the table under \"## Packages\" names %s, which is no package of go list ./...", archDoc, p)
		}
	}
}

// TestMapFilesExist: every Go file the map names by its path from the
// module's root exists, and so does every file it names by a path
// relative to docs/ (its links are TestDocLinksResolve's).
func TestMapFilesExist(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	text := withoutFences(readArchDoc(t))
	checked := 0
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		if !goFilePath.MatchString(m[1]) {
			continue
		}
		checked++
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("%s names %s, which is no file of the module", archDoc, m[1])
		}
	}
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		if !strings.HasPrefix(m[1], "../") {
			continue
		}
		checked++
		if err := checkLink(root, "docs/architecture.md", link{target: m[1]}, nil); err != nil {
			t.Errorf("%s names %s: %v", archDoc, m[1], err)
		}
	}
	if checked == 0 {
		t.Fatalf("%s: no file path or link read", archDoc)
	}
}

// withoutFences is doc without its fenced blocks, whose fences would pair
// with the backticks of the text.
func withoutFences(doc string) string {
	var text []string
	forEachProseLine(doc, func(_ int, line string) { text = append(text, line) })
	return strings.Join(text, "\n")
}

var (
	exampleFunc = regexp.MustCompile(`(?m)^func Example(\w+)\(`)
	packageName = regexp.MustCompile(`(?m)^package (\w+?)(_test)?$`)
	goName      = regexp.MustCompile(`^\w+\.[A-Z]\w*(\.[A-Z]\w*)?$`)
)

// TestMapNamesEveryExample: the map's list of runnable examples (the
// Conventions' item on Example functions) names every Example function
// of the tree, as pkg.Func or pkg.Type.Method, and only those.
func TestMapNamesEveryExample(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	err = walkTestFiles(root, func(_ string, b []byte) error {
		pkg := packageName.FindSubmatch(b)
		for _, m := range exampleFunc.FindAllSubmatch(b, -1) {
			exists[string(pkg[1])+"."+strings.ReplaceAll(string(m[1]), "_", ".")] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	doc := readArchDoc(t)
	_, item, ok := strings.Cut(doc, "\n- Runnable `Example` functions")
	if !ok {
		t.Fatalf("%s: no item \"- Runnable `Example` functions\"", archDoc)
	}
	item, _, _ = strings.Cut(item, "\n- ")
	named := map[string]bool{}
	for _, m := range backticked.FindAllStringSubmatch(item, -1) {
		if goName.MatchString(m[1]) {
			named[m[1]] = true
		}
	}
	for name := range exists {
		if !named[name] {
			t.Errorf("%s: the list of runnable examples does not name %s", archDoc, name)
		}
	}
	for name := range named {
		if !exists[name] {
			t.Errorf("%s: the list of runnable examples names %s, which is no Example function", archDoc, name)
		}
	}
}

// walkTestFiles calls visit with each test file of the module, by its
// path from root, and its text; it leaves out what ./... leaves out.
func walkTestFiles(root string, visit func(rel string, src []byte) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch name := d.Name(); {
		case d.IsDir() && path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")):
			return filepath.SkipDir // as ./... leaves them out
		case d.IsDir() || !strings.HasSuffix(name, "_test.go"):
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return visit(rel, b)
	})
}
