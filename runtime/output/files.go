package output

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mattn/go-isatty"
)

// FileFlag is a file llmrun writes, with the flag that named it: "--out
// jsonl", "--summary-export", "-o".
type FileFlag struct {
	Flag, Path string
}

// String is the flag as written: "--out jsonl=r.jsonl", "-o all.json".
func (f FileFlag) String() string {
	if strings.HasPrefix(f.Flag, "--out ") {
		return f.Flag + "=" + f.Path
	}
	return f.Flag + " " + f.Path
}

// CheckPath checks, before anything is written, that a result file
// (written once, whole, at the end) can be written at path the way
// WriteFile writes it: an existing file that is not a regular one must
// open for writing and, if it is a device, be /dev/null or a terminal,
// for a device such as /dev/full accepts the file's opening and refuses
// its every write, which would lose the result after the whole run;
// otherwise the path must not be a directory and its directory must
// exist and take a new file (results are written to a temporary file
// there, then renamed). It creates nothing that it leaves behind.
func CheckPath(path string) error { return checkPath(path, true) }

// CheckStreamPath is CheckPath for a file written while the run goes
// (--out jsonl=, csv=): any device opens, as a pipe does, for its first
// write comes within a second of the first request, and its failure is
// told then (output.Run's Warn).
func CheckStreamPath(path string) error { return checkPath(path, false) }

func checkPath(path string, wholeFile bool) error {
	if path == "" {
		return errors.New("want a file name")
	}
	info, err := os.Stat(path)
	switch {
	case err == nil && info.IsDir():
		return errors.New("it is a directory")
	case err == nil && !info.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot open it for writing: %v", WithoutPath(err))
		}
		defer f.Close()
		if wholeFile && info.Mode()&fs.ModeDevice != 0 && !isatty.IsTerminal(f.Fd()) && !isDevNull(info) {
			return errors.New("it is a device other than /dev/null or a terminal, which may refuse the result written at the end (/dev/full refuses every write): name a file")
		}
		return f.Close()
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot look it up: %v", WithoutPath(err))
	}
	return checkDir(filepath.Dir(path))
}

// isDevNull reports whether info is /dev/null's.
func isDevNull(info os.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(info, null)
}

// checkDir checks that dir exists and that a file can be created in it.
func checkDir(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("directory %s: %v", dir, WithoutPath(err))
	case !info.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	probe, err := os.CreateTemp(dir, ".llmrun-check-*")
	if err != nil {
		return fmt.Errorf("directory %s is not writable: %v", dir, WithoutPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// WriteFile writes a result file whole or not at all: write fills a
// temporary file in path's directory, which then replaces path, so that a
// failure leaves any file already at path as it was and no empty or
// partial file. An existing path that is not a regular file (a device, a
// pipe) is written to directly. A symbolic link is followed: the file it
// points to is replaced.
func WriteFile(path string, write func(io.Writer) error) error {
	if path == "" {
		return errors.New("want a file name")
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		if info.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		return writeDirect(path, write)
	}
	return writeReplace(path, write)
}

// writeDirect writes into an existing file that is not a regular one.
func writeDirect(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %v", path, WithoutPath(err))
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %v", path, WithoutPath(err))
	}
	return nil
}

// writeReplace writes a temporary file beside path and renames it to path.
func writeReplace(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating a file beside %s: %v", path, WithoutPath(err))
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %v", path, WithoutPath(err))
	}
	if err := os.Chmod(tmp.Name(), fileMode(path)); err != nil {
		return fmt.Errorf("writing %s: %v", path, WithoutPath(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %v", path, WithoutPath(err))
	}
	return nil
}

// fileMode is the permissions of the file at path, to keep when it is
// replaced; 0o644 for a new file.
func fileMode(path string) fs.FileMode {
	if info, err := os.Stat(path); err == nil {
		return info.Mode().Perm()
	}
	return 0o644
}

// SamePaths returns an error naming the first two files that are one
// file, and the file they share: the same cleaned absolute path once
// every symbolic link on the way is followed (a dangling link too: its
// target is the file that will be written), or, for files that exist,
// the same file by another name or a hard link.
func SamePaths(files []FileFlag) error {
	type seen struct {
		file FileFlag
		real string
		info os.FileInfo
	}
	var all []seen
	for _, f := range files {
		real := resolvedPath(f.Path)
		info, _ := os.Stat(f.Path)
		for _, s := range all {
			if s.real == real || info != nil && s.info != nil && os.SameFile(info, s.info) {
				return fmt.Errorf("%s and %s are the same file, %s: each output needs a file of its own", s.file, f, s.real)
			}
		}
		all = append(all, seen{f, real, info})
	}
	return nil
}

// maxLinks is the most symbolic links resolvedPath follows, as Linux's
// MAXSYMLINKS: a longer chain is a loop, which writing the file reports.
const maxLinks = 40

// resolvedPath is the file that writing path writes: path made absolute
// and clean, its directory's links resolved where it exists, and a link
// at its end followed, dangling or not, to at most maxLinks links.
func resolvedPath(path string) string {
	abs := absPath(path)
	for range maxLinks {
		target, err := os.Readlink(abs)
		if err != nil {
			return abs
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		abs = absPath(target)
	}
	return abs
}

// absPath is path made absolute and clean, its directory's links
// resolved where it exists.
func absPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// WithoutPath drops the path and operation from an *fs.PathError, whose
// message repeats the path the caller names.
func WithoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
