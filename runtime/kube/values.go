package kube

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// CheckWord refuses a value that must be one word of the manifests (an
// image, a cluster domain) but holds what a shell or Kubernetes would read
// otherwise: a control character (a newline), whitespace, "$(" (which
// Kubernetes expands from the environment), a backquote or a quote. what
// names the flag in the error.
func CheckWord(what, value string) error {
	if i := strings.IndexFunc(value, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }); i >= 0 {
		return fmt.Errorf("%s %q: holds whitespace or a control character at byte %d: want one word", what, value, i)
	}
	for _, bad := range []string{"$(", "`", `"`, "'"} {
		if strings.Contains(value, bad) {
			return fmt.Errorf("%s %q: holds %s, which a shell or Kubernetes would expand or quote: want the value itself", what, value, bad)
		}
	}
	return nil
}

// envNamePattern is the name of a variable a Secret's key can give.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckEnvName refuses a name that is not a variable's: letters, digits
// and '_', not starting with a digit. what names the flag in the error.
func CheckEnvName(what, name string) error {
	if !envNamePattern.MatchString(name) {
		return fmt.Errorf("%s %q: want a variable's name (letters, digits and '_', not starting with a digit)", what, name)
	}
	return nil
}
