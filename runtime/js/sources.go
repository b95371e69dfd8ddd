package js

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/dop251/goja/file"
)

// sourceFile is one original file of a script.
type sourceFile struct {
	// name is the file's path as errors show it: the script's own
	// filename, or an imported file's path joined to the script's directory.
	name string
	// dir is the file's absolute directory, which open() resolves against.
	dir string
	// path is the file's absolute path on disk; "" for a file built into
	// llmrun.
	path  string
	lines []string
}

// line returns the text of a line, from 1, or "" when out of range.
func (f *sourceFile) line(n int) string {
	if n < 1 || n > len(f.lines) {
		return ""
	}
	return strings.TrimSuffix(f.lines[n-1], "\r")
}

// sourceFiles lists the files of esbuild's source map, whose paths are
// relative to dir, by the names goja gives them in positions; onDisk says
// that they are files on disk, not built into llmrun.
func sourceFiles(filename, dir string, m sourceMap, onDisk bool) map[string]*sourceFile {
	files := make(map[string]*sourceFile, len(m.Sources))
	for i, src := range m.Sources {
		// The source map's sources are URLs: a(b).js is a%28b%29.js there.
		path := filepath.Join(dir, filepath.FromSlash(unescapePath(src)))
		f := &sourceFile{
			name: displayName(filename, src),
			dir:  filepath.Dir(path),
		}
		if onDisk {
			f.path = path
		}
		if i < len(m.SourcesContent) {
			f.lines = strings.Split(m.SourcesContent[i], "\n")
		}
		files[positionName(filename, src)] = f
	}
	return files
}

// positionName is the file name goja reports for positions that the source
// map maps to src: src resolved against the script's filename, as a URL.
func positionName(filename, src string) string {
	if u := file.ResolveSourcemapURL(filename, src); u != nil {
		return u.String()
	}
	return src
}

// displayName is positionName without URL escapes: a path.
func displayName(filename, src string) string {
	return unescapePath(positionName(filename, src))
}

// unescapePath is the path a URL's path names: name without its escapes,
// or name itself when they do not parse.
func unescapePath(name string) string {
	if p, err := url.PathUnescape(name); err == nil {
		return p
	}
	return name
}
