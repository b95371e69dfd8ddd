package js

import (
	"regexp"
	"strings"
)

// A bundle starts with esbuild's runtime helpers, which build namespace
// imports (__toESM), re-exports (__reExport) and module.exports
// (__toCommonJS) by copying properties. As esbuild writes them they cost
// every VU's runtime dearly in goja, which builds a builtin object or
// function, and keeps it, the first time a script touches it:
//   - __export's for-in walks the prototype chain, which builds all of
//     Object.prototype's methods, and __copyProps' for-of builds
//     Array.prototype's symbol properties and the array iterator
//     prototypes: about 18 KB per VU together;
//   - each builtin function the helpers take (Object.create,
//     Object.prototype.hasOwnProperty and the call of it) is about 700
//     bytes;
//   - __copyProps' getters keep its scope alive, with the last property
//     descriptor it read.
//
// cheaperInterop rewrites them: __export walks, with for-in, a copy of
// the object of its getters that has no prototype (made by an object
// literal's __proto__ and spread, which take no builtin); __copyProps
// walks the same property names by index, asks
// Object.getOwnPropertyDescriptor (which it already takes) whether the
// target has a property, as hasOwnProperty does, and lets go of the last
// descriptor; __toESM makes its object with an object literal's __proto__
// rather than Object.create. A default import of a Go module gets a plain
// object instead of __toESM's (defaultOnlyImports), and module.exports is
// the script's namespace object (namespaceExports). Then the declarations
// of the helpers and builtins nothing uses any more are left out
// (unusedDeclarations). A script sees the same objects: the same
// properties, in the same order, with the same getters and prototypes.
// (The walks differ only for a script that makes an enumerable property
// of Object.prototype, or replaces the array iterator, before a module it
// bundles defines its exports; esbuild's __export then throws.)
//
// Each rewrite keeps the helper's lines, so that the source map still
// fits the code. A bundle whose helpers esbuild wrote otherwise (another
// esbuild version, a script that declares a helper's name) keeps them as
// they are: TestCheaperInteropApplies notices the first.

// helperRewrite replaces one helper's text.
type helperRewrite struct {
	esbuild, cheaper string
}

// cheaperCopyProps is __copyProps as helperRewrites writes it.
const cheaperCopyProps = `
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let keys = __getOwnPropNames(from), i = 0, key; i < keys.length; i++)
      if (key = keys[i], !__getOwnPropDesc(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return desc = void 0, to;
};
`

var helperRewrites = []helperRewrite{
	{
		esbuild: `
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
`,
		cheaper: `
var __export = (target, all) => {
  for (var name in all = { __proto__: null, ...all })
    __defProp(target, name, { get: all[name], enumerable: true });
};
`,
	},
	{
		esbuild: `
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
`,
		cheaper: cheaperCopyProps,
	},
	{
		esbuild: `
var __toESM = (mod, isNodeMode, target) => (target = mod != null ? __create(__getProtoOf(mod)) : {}, __copyProps(
`,
		cheaper: `
var __toESM = (mod, isNodeMode, target) => (target = mod != null ? { __proto__: __getProtoOf(mod) } : {}, __copyProps(
`,
	},
}

// unusedDeclarations are declarations of esbuild's that the rewrites may
// leave unused: builtins the rewritten helpers no longer take, __toESM
// once every import that needed it is a default import
// (defaultOnlyImports), then the builtin only it took, and __toCommonJS
// once the script's exports are its namespace object (namespaceExports),
// then __copyProps when no namespace import or re-export needs it, and
// the builtin only it took. In this order,
// each is left out (its lines kept empty) when nothing else in the bundle
// names it.
var unusedDeclarations = []struct{ name, declaration string }{
	{"__hasOwnProp", "\nvar __hasOwnProp = Object.prototype.hasOwnProperty;\n"},
	{"__create", "\nvar __create = Object.create;\n"},
	{"__toESM", `
var __toESM = (mod, isNodeMode, target) => (target = mod != null ? { __proto__: __getProtoOf(mod) } : {}, __copyProps(
  // If the importer is in node compatibility mode or this is not an ESM
  // file that has been converted to a CommonJS file using a Babel-
  // compatible transform (i.e. "__esModule" has not been set), then set
  // "default" to the CommonJS "module.exports" for node compatibility.
  isNodeMode || !mod || !mod.__esModule ? __defProp(target, "default", { value: mod, enumerable: true }) : target,
  mod
));
`},
	{"__getProtoOf", "\nvar __getProtoOf = Object.getPrototypeOf;\n"},
	{"__toCommonJS", "\nvar __toCommonJS = (mod) => __copyProps(__defProp({}, \"__esModule\", { value: true }), mod);\n"},
	{"__copyProps", cheaperCopyProps},
	{"__getOwnPropDesc", "\nvar __getOwnPropDesc = Object.getOwnPropertyDescriptor;\n"},
	{"__getOwnPropNames", "\nvar __getOwnPropNames = Object.getOwnPropertyNames;\n"},
}

// goModuleImport is esbuild's namespace object of a Go module's import
// (a bare specifier, left to require): ", 1" follows the require in an
// importer esbuild takes for Node's ES modules (.mjs), which always makes
// the module's exports the namespace's default.
var goModuleImport = regexp.MustCompile(`(?m)^var ([A-Za-z_$][\w$]*) = __toESM\((require\("[^"./][^"]*"\))(, 1)?\);$`)

// defaultOnlyImports rewrites the namespace object of each default import
// of a Go module (import llm from 'llm') that the bundle reads only as
// NAME.default, which is all a default import reads: __toESM copies the
// module's every export into it with a getter of its own, which no script
// can reach; { default: exports } is what it reads the same. (__toESM
// makes the default the module's exports, as this does, unless they have
// an __esModule property: a Go module's have none, unless the script,
// having imported the module before, gives them one.) The require keeps
// its column, which the source map positions a failing import by. For
// bench/stream.js that is 2.8 KB of every VU's 23, and 1 KB more when
// __toESM and the builtin it takes go (unusedDeclarations).
func defaultOnlyImports(code string) string {
	return goModuleImport.ReplaceAllStringFunc(code, func(decl string) string {
		m := goModuleImport.FindStringSubmatch(decl)
		name, require := m[1], m[2]
		if !onlyDefaultRead(code, name, decl) {
			return decl
		}
		return "var " + name + " ={default:" + require + "};"
	})
}

// onlyDefaultRead says whether the identifier name occurs in code first
// in its declaration decl, and then only as name.default.
func onlyDefaultRead(code, name, decl string) bool {
	first := true
	for i := 0; ; {
		at := nextIdentifier(code, name, i)
		if at < 0 {
			return !first
		}
		end := at + len(name)
		i = end
		if first {
			if at < len("var ") || !strings.HasPrefix(code[at-len("var "):], decl) {
				return false
			}
			first, i = false, at-len("var ")+len(decl)
			continue
		}
		rest := code[end:]
		if !strings.HasPrefix(rest, ".default") || len(rest) > len(".default") && isIdentChar(rest[len(".default")]) {
			return false
		}
	}
}

// nextIdentifier returns where name next occurs in code from i on as a
// whole identifier (not part of a longer one), or -1.
func nextIdentifier(code, name string, i int) int {
	for {
		j := strings.Index(code[i:], name)
		if j < 0 {
			return -1
		}
		at, end := i+j, i+j+len(name)
		if (at == 0 || !isIdentChar(code[at-1])) && (end == len(code) || !isIdentChar(code[end])) {
			return at
		}
		i = end
	}
}

// entryExports is the line by which esbuild makes module.exports of the
// script's namespace object, the object of getters that __export made of
// its exports: a copy of it with a getter per export that reads the
// namespace's, and __esModule.
var entryExports = regexp.MustCompile(`(?m)^module\.exports = __toCommonJS\(([A-Za-z_$][\w$]*)\);$`)

// namespaceExports makes module.exports the script's namespace object
// itself, rather than __toCommonJS's copy of it, when nothing but that
// line names module: then only the engine reads module.exports, export
// by export, and the namespace's getters give it what the copy's did (the
// live value of each export, what it throws); no script can tell. The
// copy cost a function per export (mixed-workload.js: four), and it and
// __toCommonJS kept __toCommonJS, __copyProps and the builtin it took.
func namespaceExports(code string) string {
	m := entryExports.FindStringSubmatchIndex(code)
	if m == nil || nextIdentifier(code, "module", m[1]) >= 0 || nextIdentifier(code[:m[0]], "module", 0) >= 0 {
		return code
	}
	return code[:m[0]] + "module.exports = " + code[m[2]:m[3]] + ";" + code[m[1]:]
}

func isIdentChar(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// cheaperInterop rewrites the helpers at the top of esbuild's output code,
// before the first file's code (which starts with a comment naming the
// file, at the start of a line), the namespace objects of default
// imports of Go modules (defaultOnlyImports), and module.exports
// (namespaceExports).
func cheaperInterop(code string) string {
	end := strings.Index(code, "\n//")
	if end < 0 {
		return code
	}
	helpers, files := code[:end+1], code[end+1:]
	for _, r := range helperRewrites {
		helpers = strings.Replace(helpers, r.esbuild, r.cheaper, 1)
	}
	files = namespaceExports(defaultOnlyImports(files))
	for _, d := range unusedDeclarations {
		if strings.Count(helpers, d.name) == 1 && !strings.Contains(files, d.name) {
			helpers = strings.Replace(helpers, d.declaration, strings.Repeat("\n", strings.Count(d.declaration, "\n")), 1)
		}
	}
	return helpers + files
}
