package js

import (
	"regexp"
	"slices"
	"strings"
)

// namedImportDecl is esbuild's declaration of the object through which a
// file reads the named imports of a Go module (a bare specifier, left to
// require): import { a } from 'm' becomes var import_m = require("m"),
// and each use of a, import_m.a. (A namespace import keeps the script's
// own name, and a read of a name it lacks is undefined in ES modules
// too, so only esbuild's import_ names are taken.)
var namedImportDecl = regexp.MustCompile(`(?m)^var (import_[\w$]*) = (?:__toESM\()?require\("([^"./][^"]*)"\)`)

// namedImports returns the names code imports by name from each Go
// module, sorted, by module: what the module must export, for require
// to check at load (requirer.checkNamedImports).
func namedImports(code string) map[string][]string {
	var imports map[string][]string
	for _, m := range namedImportDecl.FindAllStringSubmatch(code, -1) {
		ident, module := m[1], m[2]
		for i := nextIdentifier(code, ident, 0); i >= 0; i = nextIdentifier(code, ident, i+len(ident)) {
			rest, ok := strings.CutPrefix(code[i+len(ident):], ".")
			if !ok {
				continue
			}
			name := rest[:identifierLength(rest)]
			if name == "" || name == "default" || slices.Contains(imports[module], name) {
				continue
			}
			if imports == nil {
				imports = map[string][]string{}
			}
			imports[module] = append(imports[module], name)
		}
	}
	for _, names := range imports {
		slices.Sort(names)
	}
	return imports
}

// identifierLength is the length of the identifier s starts with.
func identifierLength(s string) int {
	n := 0
	for n < len(s) && isIdentChar(s[n]) {
		n++
	}
	return n
}
