package scripts

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/llmrun/llmrun/runtime/spelling"
)

// DefaultTemplate is the template "llmrun new" writes when given none.
const DefaultTemplate = "chat"

//go:embed templates/*.js
var templateFiles embed.FS

// Template is a commented starting script that runs as written against
// the built-in simulator: templates/NAME.js, whose first line is
// "// NAME: summary".
type Template struct {
	Name    string // "chat"
	Summary string // what it benchmarks, in a line
}

// Templates lists the templates, sorted by name.
func Templates() []Template {
	entries, err := fs.ReadDir(templateFiles, "templates")
	if err != nil {
		panic(err) // the embedded directory always reads
	}
	list := make([]Template, 0, len(entries))
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".js")
		src, err := templateFiles.ReadFile("templates/" + e.Name())
		if err != nil {
			panic(err) // a file of the embedded directory always reads
		}
		first, _, _ := strings.Cut(string(src), "\n")
		list = append(list, Template{Name: name, Summary: strings.TrimPrefix(first, "// "+name+": ")})
	}
	return list
}

// TemplateNames lists the templates' names, sorted.
func TemplateNames() []string {
	var names []string
	for _, t := range Templates() {
		names = append(names, t.Name)
	}
	return names
}

// DefaultScript is the file "llmrun new" writes when given none, which
// the templates' comments tell to run.
const DefaultScript = "script.js"

// TemplateSource returns the named template as it is written to file: its
// comments' commands run file. An unknown name is an error that names the
// nearest template and lists them all.
func TemplateSource(name, file string) ([]byte, error) {
	src, err := templateFiles.ReadFile("templates/" + name + ".js")
	if err != nil {
		hint := ""
		if near := spelling.Nearest(name, TemplateNames()); near != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		return nil, fmt.Errorf("no template %q%s; the templates are %s", name, hint, strings.Join(TemplateNames(), ", "))
	}
	return []byte(strings.ReplaceAll(string(src), RunCommand(DefaultScript), RunCommand(file))), nil
}

// plainPath is a path a shell takes as it is.
var plainPath = regexp.MustCompile(`^[A-Za-z0-9._/+:@%=-]+$`)

// RunCommand is the command line that runs the script at path, quoted for
// a POSIX shell when it needs to be, and a path that would read as a flag
// (-x.js) named from the working directory (./-x.js).
func RunCommand(path string) string {
	return "llmrun run " + shellArg(path)
}

// TypesCommand is the command that writes, beside the script at path, the
// declarations an editor completes and checks it with.
func TypesCommand(path string) string {
	return "llmrun types " + shellArg(filepath.Dir(path))
}

// shellArg is path as one argument of a shell command line: quoted when
// it holds more than letters, digits and ./_-, and never taken for a flag.
func shellArg(path string) string {
	if strings.HasPrefix(path, "-") {
		path = "./" + path
	}
	if !plainPath.MatchString(path) {
		path = "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	}
	return path
}

// WriteFile writes src to path, creating it and the directories it is in
// (as "llmrun types DIR" creates DIR); an existing file is replaced only
// when overwrite is set, and is otherwise an error wrapping fs.ErrExist.
func WriteFile(path string, src []byte, overwrite bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the directory of %s: %w", path, err)
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		// Not a file that overwrite would replace.
		return fmt.Errorf("%s is a directory: name a file in it, such as %s", path, filepath.Join(path, DefaultScript))
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return existsError{path}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, err = f.Write(src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// existsError is a file WriteFile would not replace.
type existsError struct{ path string }

func (e existsError) Error() string { return e.path + " already exists" }

func (e existsError) Is(target error) bool { return target == fs.ErrExist }
