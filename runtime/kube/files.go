package kube

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmrun/llmrun/internal/capped"
)

// MaxFiles bounds the ConfigMap's files together: Kubernetes stores an
// object of at most 1 MiB, and the rest of the ConfigMap (keys, names,
// base64 of binary files) needs some of it.
const MaxFiles = 1000 << 10

// Layout is where local files are in the pods: each at its path relative
// to Root, the deepest directory holding them all and the working
// directory, under MountDir; the working directory is the same place
// relative to Root, so that paths relative to the working directory (on
// the command line) and to the script (in the script) both still work.
type Layout struct {
	Root  string // absolute, local
	Files []File
	// WorkDir is the working directory relative to MountDir.
	WorkDir string
}

// NewLayout reads the files at paths (relative to workDir, or absolute)
// into a Layout with workDir. A file outside the script's tree (Tree) or
// of the system's (SystemDirs), that is not a regular file, or that would
// make the files larger together than MaxFiles, is an error naming it.
// script is the script's path (relative to workDir, or absolute); "" for
// a script built into llmrun.
func NewLayout(workDir, script string, paths []string) (*Layout, error) {
	workDir, err := filepath.Abs(workDir)
	if err != nil {
		return nil, fmt.Errorf("the working directory: %w", err)
	}
	tree := Tree(workDir, script)
	abs := make([]string, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(workDir, p)
		}
		if err := checkSource(tree, filepath.Clean(p)); err != nil {
			return nil, err
		}
		abs = append(abs, filepath.Clean(p))
	}
	slices.Sort(abs)
	abs = slices.Compact(abs)
	root := workDir
	for _, p := range abs {
		root = commonDir(root, filepath.Dir(p))
	}
	l := &Layout{Root: root, WorkDir: relSlash(root, workDir)}
	var total int64
	for _, p := range abs {
		data, err := capped.ReadFile(p, MaxFiles)
		var tooLarge *capped.TooLargeError
		switch {
		case errors.As(err, &tooLarge):
			return nil, fmt.Errorf("%s is larger than %s, the most a ConfigMap holds: mount it from a volume of your own, or use a smaller sample", p, capped.Size(MaxFiles))
		case err != nil:
			return nil, fmt.Errorf("reading a file for the ConfigMap: %w", err)
		}
		if total += int64(len(data)); total > MaxFiles {
			return nil, fmt.Errorf("%s (%s) makes the ConfigMap's files %s in all, more than the %s a ConfigMap holds", p, capped.Size(int64(len(data))), capped.Size(total), capped.Size(MaxFiles))
		}
		l.Files = append(l.Files, File{Path: relSlash(root, p), Data: data})
	}
	if !l.holdsWorkDir() {
		l.Files = append(l.Files, File{Path: l.WorkDir + "/" + WorkDirMarker})
	}
	return l, nil
}

// SystemDirs hold the files of the machine's system, not of a script's:
// /proc/self/environ is llmrun's whole environment, API keys included.
var SystemDirs = []string{"/proc", "/sys", "/dev"}

// Tree is the directory whose files the ConfigMap may take: the working
// directory (absolute) when it holds the script (kube run from the
// project's top, tests/chat.js reading shared/prompts.txt), else the
// script's own directory; the working directory for a built-in script.
func Tree(workDir, script string) string {
	if script == "" {
		return workDir
	}
	if !filepath.IsAbs(script) {
		script = filepath.Join(workDir, script)
	}
	if script = filepath.Clean(script); Within(script, workDir) {
		return workDir
	}
	return filepath.Dir(script)
}

// checkSource refuses the file at path (absolute and clean) when it, or what its links lead to, is under one of
// SystemDirs or outside tree: the ConfigMap, which whoever reads the
// namespace reads, would hold it in plain text.
func checkSource(tree, path string) error {
	systemFile := func(p string) error {
		if dir := systemDir(p); dir != "" {
			return fmt.Errorf("%s: refused: it is under %s, the machine's system (such as llmrun's own environment, API keys included), not a file of the script's; the ConfigMap would hold it in plain text", path, dir)
		}
		return nil
	}
	if err := systemFile(path); err != nil {
		return err
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("reading a file for the ConfigMap: %w", err)
	}
	if err := systemFile(resolved); err != nil {
		return err
	}
	realTree, err := filepath.EvalSymlinks(tree)
	if err != nil {
		return fmt.Errorf("the script's directory: %w", err)
	}
	if !Within(resolved, realTree) {
		via := ""
		if resolved != path {
			via = " (through a link, to " + resolved + ")"
		}
		return fmt.Errorf("%s: refused: it lies outside %s%s, the script's tree, and the ConfigMap takes only that tree's files: copy it into the tree, or mount it from a volume of your own", path, tree, via)
	}
	return nil
}

// systemDir is the one of SystemDirs path is in, or "".
func systemDir(path string) string {
	for _, dir := range SystemDirs {
		if Within(path, dir) {
			return dir
		}
	}
	return ""
}

// WorkDirMarker is the empty file put in the pods' working directory when
// no file of the script's lies in it: the ConfigMap's volume holds only
// the directories of its files, and is read-only, so a pod whose working
// directory it lacks could not start.
const WorkDirMarker = ".llmrun-workdir"

// holdsWorkDir reports whether the files put the working directory in
// the volume: it is MountDir itself, or a file lies in it or below.
func (l *Layout) holdsWorkDir() bool {
	return l.WorkDir == "." || slices.ContainsFunc(l.Files, func(f File) bool { return strings.HasPrefix(f.Path, l.WorkDir+"/") })
}

// InPod is where the local file path (relative to the working directory,
// or absolute) is in the pods.
func (l *Layout) InPod(path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.Root, filepath.FromSlash(l.WorkDir), path)
	}
	return MountDir + "/" + relSlash(l.Root, path)
}

// commonDir is the deepest directory holding both a and b (absolute and
// clean).
func commonDir(a, b string) string {
	for !Within(b, a) {
		a = filepath.Dir(a)
	}
	return a
}

// Within reports whether path is dir or below it (both absolute or both
// relative to the same directory).
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// relSlash is path relative to root, slash-separated; "." for root.
func relSlash(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		// Both are absolute and path is within root.
		panic(err)
	}
	return filepath.ToSlash(rel)
}

// checkFiles checks the files' paths, which the volume's items give:
// relative, without "..", as Kubernetes requires, and their total size.
func checkFiles(files []File) error {
	var total int
	for _, f := range files {
		if f.Path == "" || strings.HasPrefix(f.Path, "/") || slices.Contains(strings.Split(f.Path, "/"), "..") {
			return fmt.Errorf("file %q: want a relative path without '..'", f.Path)
		}
		total += len(f.Data)
	}
	if total > MaxFiles {
		return fmt.Errorf("the files come to %s, more than the %s a ConfigMap holds", capped.Size(int64(total)), capped.Size(MaxFiles))
	}
	return nil
}
