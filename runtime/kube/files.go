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
// into a Layout with workDir. A file that is not a regular file, or that
// would make the files larger together than MaxFiles, is an error naming
// it.
func NewLayout(workDir string, paths []string) (*Layout, error) {
	workDir, err := filepath.Abs(workDir)
	if err != nil {
		return nil, fmt.Errorf("the working directory: %w", err)
	}
	abs := make([]string, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(workDir, p)
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
