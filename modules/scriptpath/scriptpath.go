// Package scriptpath finds the files a script names by path, by one rule
// for every API that reads one: open(), the data module's dataset() and
// tokenizer files, llmrun/config's load() and settings() (its CONFIG),
// llm.client()'s tls.caFile and tokenizer.
//
//   - An absolute path is taken as given.
//   - A relative path is looked up against the script's directory; for
//     open(), against the directory of the file whose code calls it (an
//     imported module's own).
//   - Not found there but found relative to the working directory, that
//     file is used, and a deprecation warning says so, once per file: a
//     future version resolves only against the script.
//   - A path that is the value of a variable of the environment the
//     command line gave the script (-e NAME=PATH, or the process's
//     environment) was typed on the command line, where paths are
//     relative to the working directory: it is looked up there first,
//     then against the script, and never warns. A file below such a
//     value taken as a directory (-e DIR=data, __ENV.DIR + '/chats.jsonl')
//     is looked up as any path, but found in the working directory alone
//     it does not warn: a variable whose value is by chance a directory's
//     name (NODE_ENV=test) changes no file read.
//   - A script built into llmrun (stock:…) has no directory: its paths
//     are relative to the working directory.
//
// config.load(), settings()' CONFIG, tls.caFile and llm.client()'s
// tokenizer read the working directory alone before this rule: through
// FormerlyWorkDir, a file found beside the script while the working
// directory has another of that name, the one they read before, is read
// with a warning that says so, once per file.
//
// Every file found is told to the run's FileRead, so the files shipped
// with a script to a distributed run's instances are those it found.
package scriptpath

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

// Config is what a Resolver needs of the run.
type Config struct {
	// Script is the script's path as given (relative to the working
	// directory, or absolute); it names the script in warnings.
	Script string
	// BuiltIn says that the script is built into llmrun: it has no
	// directory, and its paths are relative to the working directory.
	BuiltIn bool
	// Env is the environment the command line gave the script (the
	// process's and -e's); a path that is one of its values is a path
	// from the command line.
	Env map[string]string
	// Warn receives each deprecation warning, once per file; nil drops
	// them.
	Warn func(msg string)
	// FileRead, when set, is told the path of every file found; it may
	// be called from several VUs at once.
	FileRead func(path string)
}

// Resolver resolves the paths one run's script names. It is safe for
// concurrent use. A nil *Resolver resolves as for a script built into
// llmrun, and warns and tells no one.
type Resolver struct {
	cfg Config
	// dir is the script's directory as its path gives it, absDir the
	// same absolute; both "" for a built-in script.
	dir, absDir string
	commandLine map[string]bool
	// formerlyWorkDir: the API read relative paths against the working
	// directory alone before (FormerlyWorkDir).
	formerlyWorkDir bool

	// once is shared with the resolvers FormerlyWorkDir returns.
	once *once
}

// once holds the warnings told, by kind and file.
type once struct {
	mu     sync.Mutex
	warned map[string]bool
}

// first reports whether key is told for the first time.
func (o *once) first(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.warned[key] {
		return false
	}
	o.warned[key] = true
	return true
}

// New returns the resolver of the script cfg describes.
func New(cfg Config) *Resolver {
	r := &Resolver{cfg: cfg, commandLine: make(map[string]bool, len(cfg.Env)), once: &once{warned: map[string]bool{}}}
	for _, v := range cfg.Env {
		if v != "" {
			r.commandLine[v] = true
		}
	}
	if !cfg.BuiltIn {
		r.dir = filepath.Dir(cfg.Script)
		r.absDir = absolute(r.dir)
	}
	return r
}

// FormerlyWorkDir is r for an API that read relative paths against the
// working directory alone before the rule of this package: where the
// working directory has another file of the name found beside the script,
// a warning says which one is read now. Its warnings are r's: each told
// once. A nil r gives nil.
func (r *Resolver) FormerlyWorkDir() *Resolver {
	if r == nil {
		return nil
	}
	moved := *r
	moved.formerlyWorkDir = true
	return &moved
}

// Resolve returns the file path names, relative paths against the
// script's directory. who is the call or field that names it, as errors
// and warnings quote it: `dataset("chats.json")`.
func (r *Resolver) Resolve(who, path string) (string, error) {
	return r.ResolveFrom("", who, path)
}

// ResolveFrom is Resolve for a path named by the code of the file in dir:
// open() in an imported module resolves against the module's directory.
// "" is the script's directory. A file found relative to a directory is
// named by that directory joined with path (the script's as the script's
// path gives it).
func (r *Resolver) ResolveFrom(dir, who, path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%s: no path given", who)
	}
	if filepath.IsAbs(path) {
		if !exists(path) {
			return "", fmt.Errorf("%s: %s: no such file", who, path)
		}
		return r.found(path), nil
	}
	if r == nil || r.dir == "" {
		if exists(path) {
			return r.found(path), nil
		}
		if r == nil {
			return "", fmt.Errorf("%s: no such file: looked for %s in the working directory%s", who, path, workDirNote())
		}
		return "", fmt.Errorf("%s: no such file: looked for %s in the working directory%s (%s is built into llmrun: it has no directory of its own)", who, path, workDirNote(), r.cfg.Script)
	}
	if dir == "" {
		dir = r.dir
	}
	beside := filepath.Join(dir, path)
	switch {
	case r.commandLine[path] && exists(path):
		return r.found(path), nil
	case exists(beside):
		r.warnMoved(who, path, dir)
		return r.found(beside), nil
	case exists(path):
		if !r.belowCommandLine(path) {
			r.warn(who, path, dir)
		}
		return r.found(path), nil
	}
	return "", r.notFound(who, path, dir)
}

// notFound is the error of who's path, found neither relative to dir nor
// to the working directory, naming each place looked at once, in the
// order they were: a command line's path the working directory first.
func (r *Resolver) notFound(who, path, dir string) error {
	beside := filepath.Join(dir, path)
	if absolute(dir) == absolute(".") {
		return fmt.Errorf("%s in %s: no such file: looked for %s (relative to %s, which is the working directory)", who, r.cfg.Script, beside, r.relativeTo(dir))
	}
	first, then := fmt.Sprintf("%s (relative to %s)", beside, r.relativeTo(dir)), fmt.Sprintf("%s (relative to the working directory%s)", path, workDirNote())
	if r.commandLine[path] {
		first, then = then, first
	}
	return fmt.Errorf("%s in %s: no such file: looked for %s and %s", who, r.cfg.Script, first, then)
}

// belowCommandLine reports whether path is a value of the command line's
// environment or a path below one: its leading directories are one.
func (r *Resolver) belowCommandLine(path string) bool {
	if r.commandLine[path] {
		return true
	}
	for i := range len(path) {
		if os.IsPathSeparator(path[i]) && (r.commandLine[path[:i]] || r.commandLine[path[:i+1]]) {
			return true
		}
	}
	return false
}

// ResolveTokenizer returns the tokenizer spec names: a built-in encoding
// or a Hugging Face model id as given, a tokenizer.json file or a model's
// directory resolved as Resolve resolves a path.
func (r *Resolver) ResolveTokenizer(who, spec string) (string, error) {
	if tokenizer.IsEncoding(spec) {
		return spec, nil
	}
	path, err := r.Resolve(who, spec)
	switch {
	case err == nil:
		return path, nil
	case tokenizer.IsModelID(spec):
		return spec, nil
	}
	return "", fmt.Errorf("unknown tokenizer %q: want one of %s, a Hugging Face model id (ORG/NAME) or the path of a tokenizer.json file (%w)",
		spec, strings.Join(tokenizer.Encodings, ", "), err)
}

// found tells FileRead of path and returns it.
func (r *Resolver) found(path string) string {
	if r != nil && r.cfg.FileRead != nil {
		r.cfg.FileRead(path)
	}
	return path
}

// relativeTo names dir in messages.
func (r *Resolver) relativeTo(dir string) string {
	if absolute(dir) == r.absDir {
		return "the script's directory"
	}
	return "the directory of the module that names it"
}

// warn tells Warn, once per file, that who's path was found relative to
// the working directory only, not relative to dir, and how to name it.
func (r *Resolver) warn(who, path, dir string) {
	abs := absolute(path)
	if !r.once.first("working directory only: "+abs) || r.cfg.Warn == nil {
		return
	}
	r.cfg.Warn(fmt.Sprintf("%s in %s: %s was found relative to the working directory (%s), not to %s (there is no %s). This is deprecated: a future version resolves paths only against the script. Name it %q (relative to %s) or %q",
		who, r.cfg.Script, path, abs, r.relativeTo(dir), filepath.Join(dir, path), relativeName(dir, abs), r.relativeTo(dir), abs))
}

// relativeName is how code in dir names the file at abs: relative to dir,
// or abs itself where it cannot be.
func relativeName(dir, abs string) string {
	rel, err := filepath.Rel(absolute(dir), abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}

// warnMoved tells Warn, once per file, that who reads path relative to
// dir, and no longer the other file of that name in the working
// directory, which it read before: when r is FormerlyWorkDir's and there
// is such a file.
func (r *Resolver) warnMoved(who, path, dir string) {
	beside, abs := filepath.Join(dir, path), absolute(path)
	if !r.formerlyWorkDir || !exists(path) || sameFile(beside, path) || !r.once.first("moved: "+absolute(beside)) || r.cfg.Warn == nil {
		return
	}
	r.cfg.Warn(fmt.Sprintf("%s in %s: reads %s, relative to %s; before this version it read %s, another file, relative to the working directory. Relative paths now resolve against the script: name that one %q (relative to %s) or %q",
		who, r.cfg.Script, beside, r.relativeTo(dir), abs, relativeName(dir, abs), r.relativeTo(dir), abs))
}

// absolute is path made absolute, or path itself when the working
// directory is unknown.
func absolute(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return abs
}

// workDirNote is ", DIR" naming the working directory, or "" when it is
// unknown.
func workDirNote() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return ", " + wd
}

// sameFile reports whether a and b are one file.
func sameFile(a, b string) bool {
	infoA, errA := os.Stat(a)
	infoB, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(infoA, infoB)
}

// exists reports whether there is a file (or directory) at path.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
