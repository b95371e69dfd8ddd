package architecture

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines is the most README.md may hold: it is an index a
// newcomer reads in minutes, and the manual is docs/ (issue 30).
const readmeMaxLines = 250

var (
	// relLink is a Markdown inline link's target and its optional
	// fragment: ](PATH#ANCHOR), ](PATH) or ](#ANCHOR).
	relLink   = regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	heading   = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*#*\s*$`)
	inlineURL = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	htmlID    = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// frontDoorPages are README.md and every page of docs/, by their path
// from the module's root.
func frontDoorPages(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatalf("no page in %s", filepath.Join(root, "docs"))
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	for i, p := range pages {
		pages[i], _ = filepath.Rel(root, p)
	}
	return pages
}

// readModuleFile is the text of the file at path from the module's root.
func readModuleFile(t *testing.T, path string) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeIsShort: README.md is an index, at most readmeMaxLines lines.
func TestReadmeIsShort(t *testing.T) {
	if n := strings.Count(readModuleFile(t, "README.md"), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: it is the index, move the detail into a page of docs/ and link to it", n, readmeMaxLines)
	}
}

// TestReadmeScenarioIsTheQuickstart: the scenario README.md shows (its
// first js block) is examples/quickstart.js as it is, less its header
// comment, so the page and the file it runs cannot drift apart.
func TestReadmeScenarioIsTheQuickstart(t *testing.T) {
	_, block, found := strings.Cut(readModuleFile(t, "README.md"), "\n```js\n")
	block, _, closed := strings.Cut(block, "\n```\n")
	if !found || !closed {
		t.Fatal("README.md has no js block: it shows examples/quickstart.js in one")
	}
	if !strings.HasSuffix(readModuleFile(t, "examples/quickstart.js"), "\n"+block+"\n") {
		t.Errorf("README.md's js block is not the end of examples/quickstart.js: copy the file there again, without its header comment")
	}
}

// TestDocLinksResolve: every relative link of README.md and of docs/*.md
// names a file of the module and, when it has a #fragment into a
// Markdown page, a heading of that page, by GitHub's anchor rules.
func TestDocLinksResolve(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	anchorsOf := map[string]map[string]bool{}
	checked := 0
	for _, page := range frontDoorPages(t, root) {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range pageLinks(string(b)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			checked++
			if err := checkLink(root, page, l, anchorsOf); err != nil {
				t.Errorf("%s:%d: %v", page, l.line, err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link read in README.md or docs/")
	}
}

// TestDocsIndexLinksEveryPage: docs/README.md, the index GitHub shows
// when browsing the folder, and README.md's map of the docs each link to
// every page of docs/.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, index := range []string{"docs/README.md", "README.md"} {
		b, err := os.ReadFile(filepath.Join(root, index))
		if err != nil {
			t.Errorf("%v: docs/ needs an index page", err)
			continue
		}
		linked := map[string]bool{}
		for _, l := range pageLinks(string(b)) {
			linked[filepath.Join(filepath.Dir(index), l.target)] = true
		}
		for _, page := range frontDoorPages(t, root) {
			if page != "README.md" && page != index && !linked[page] {
				t.Errorf("%s does not link to %s: add it to its map of the docs, with the question it answers", index, page)
			}
		}
	}
}

// link is one Markdown link of a page: its target path (empty for the
// page itself), its fragment without '#', and its line.
type link struct {
	target, fragment string
	line             int
}

// pageLinks are the inline links of a Markdown page outside its fenced
// blocks.
func pageLinks(doc string) []link {
	var links []link
	forEachProseLine(doc, func(n int, line string) {
		for _, m := range relLink.FindAllStringSubmatch(line, -1) {
			links = append(links, link{target: m[1], fragment: strings.TrimPrefix(m[2], "#"), line: n})
		}
	})
	return links
}

// forEachProseLine calls each with every line of a Markdown page outside
// its fenced blocks (whose comments are no headings and whose brackets
// are no links), and the line's number from 1.
func forEachProseLine(doc string, each func(n int, line string)) {
	fenced := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			each(i+1, line)
		}
	}
}

// checkLink says what is wrong with a link of page, if anything.
// anchorsOf caches each Markdown page's anchors.
func checkLink(root, page string, l link, anchorsOf map[string]map[string]bool) error {
	target := page
	if l.target != "" {
		target = filepath.Join(filepath.Dir(page), l.target)
		if rel, err := filepath.Rel(root, filepath.Join(root, target)); err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("link to %s, outside the module", l.target)
		}
		if _, err := os.Stat(filepath.Join(root, target)); err != nil {
			return fmt.Errorf("link to %s, which is no file of the module", l.target)
		}
	}
	if l.fragment == "" || !strings.HasSuffix(target, ".md") {
		return nil
	}
	anchors, ok := anchorsOf[target]
	if !ok {
		b, err := os.ReadFile(filepath.Join(root, target))
		if err != nil {
			return err
		}
		anchors = markdownAnchors(string(b))
		anchorsOf[target] = anchors
	}
	if !anchors[l.fragment] {
		return fmt.Errorf("link to %s#%s: %s has no heading with that anchor", l.target, l.fragment, target)
	}
	return nil
}

// markdownAnchors are the anchors GitHub gives a page's headings (and
// its <a id> or <a name> tags), a repeated one suffixed -1, -2, ….
func markdownAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	forEachProseLine(doc, func(_ int, line string) {
		for _, m := range htmlID.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		a := githubAnchor(m[1])
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	})
	return anchors
}

// githubAnchor is the anchor GitHub makes of a heading's text: links
// become their text, letters are lowercased, spaces become '-', and
// everything but letters, digits, '-' and '_' is dropped.
func githubAnchor(text string) string {
	text = inlineURL.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestGithubAnchor(t *testing.T) {
	for _, tc := range []struct{ heading, anchor string }{
		{"The simulator", "the-simulator"},
		{"`llmrun bench`: vllm bench serve's command line", "llmrun-bench-vllm-bench-serves-command-line"},
		{"Load: VUs, rates and time", "load-vus-rates-and-time"},
		{"json=-: the result in a log", "json--the-result-in-a-log"},
		{"Tokenizers by [Hugging Face](https://huggingface.co) model id", "tokenizers-by-hugging-face-model-id"},
		{"snake_case and 10,000 streams", "snake_case-and-10000-streams"},
	} {
		if got := githubAnchor(tc.heading); got != tc.anchor {
			t.Errorf("githubAnchor(%q) = %q, want %q", tc.heading, got, tc.anchor)
		}
	}
}

// TestCheckLinkCatchesBrokenLinks: a link to a missing file, to a missing
// heading, or past the module is told; links to a heading, a repeated
// heading's second anchor and a non-Markdown file pass.
func TestCheckLinkCatchesBrokenLinks(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := "# Page\n\n## Usage\n\n```sh\n# not a heading\n```\n\n## Usage\n\n<a id=\"custom\"></a>\n"
	for name, text := range map[string]string{"docs/page.md": page, "docs/data.json": "{}"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		target, fragment string
		wantErr          string
	}{
		{"page.md", "usage", ""},
		{"page.md", "usage-1", ""},
		{"page.md", "custom", ""},
		{"", "page", ""},
		{"data.json", "anything", ""},
		{"page.md", "usage-2", "no heading with that anchor"},
		{"page.md", "not-a-heading", "no heading with that anchor"},
		{"gone.md", "", "no file of the module"},
		{"../../outside.md", "", "outside the module"},
	} {
		err := checkLink(root, "docs/page.md", link{target: tc.target, fragment: tc.fragment}, map[string]map[string]bool{})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("link %s#%s: %v, want none", tc.target, tc.fragment, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("link %s#%s: error %v, want one saying %q", tc.target, tc.fragment, err, tc.wantErr)
		}
	}
}
