package js

import "strings"

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
// cheaperInterop rewrites them: __export and __copyProps walk the same
// property names by index, __copyProps asks Object.getOwnPropertyDescriptor
// (which it already takes) whether the target has a property, as
// hasOwnProperty does, and lets go of the last descriptor, and __toESM
// makes its object with an object literal's __proto__ rather than
// Object.create. Then the declarations of the builtins nothing uses any
// more are left out. A script sees the same objects: the same properties,
// in the same order, with the same getters and prototypes. (The for-in
// and for-of differ only for a script that makes an enumerable property
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
	// needs is a declaration of the bundle's that cheaper uses.
	needs string
}

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
  for (var names = __getOwnPropNames(all), i = 0, name; i < names.length; i++)
    name = names[i], __defProp(target, name, { get: all[name], enumerable: true });
};
`,
		needs: "\nvar __getOwnPropNames = Object.getOwnPropertyNames;\n",
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
		cheaper: `
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let keys = __getOwnPropNames(from), i = 0, key; i < keys.length; i++)
      if (key = keys[i], !__getOwnPropDesc(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return desc = void 0, to;
};
`,
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

// builtinDeclarations are esbuild's declarations of builtins that the
// rewritten helpers no longer use; each is left out (its line kept empty)
// when nothing else in the bundle names it.
var builtinDeclarations = []struct{ name, declaration string }{
	{"__hasOwnProp", "\nvar __hasOwnProp = Object.prototype.hasOwnProperty;\n"},
	{"__create", "\nvar __create = Object.create;\n"},
}

// cheaperInterop rewrites the helpers at the top of esbuild's output code,
// before the first file's code (which starts with a comment naming the
// file, at the start of a line).
func cheaperInterop(code string) string {
	end := strings.Index(code, "\n//")
	if end < 0 {
		return code
	}
	helpers, files := code[:end+1], code[end+1:]
	for _, r := range helperRewrites {
		if strings.Contains(helpers, r.needs) {
			helpers = strings.Replace(helpers, r.esbuild, r.cheaper, 1)
		}
	}
	for _, d := range builtinDeclarations {
		if strings.Count(helpers, d.name) == 1 && !strings.Contains(files, d.name) {
			helpers = strings.Replace(helpers, d.declaration, "\n\n", 1)
		}
	}
	return helpers + files
}
