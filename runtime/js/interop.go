package js

import "strings"

// A bundle starts with esbuild's runtime helpers, which build namespace
// imports (__toESM), re-exports (__reExport) and module.exports
// (__toCommonJS) by copying properties. Two of them iterate in a way that
// costs every VU's runtime dearly in goja: __export's for-in walks the
// prototype chain, which makes goja build and keep all of Object.prototype's
// methods, and __copyProps' for-of makes it build Array.prototype's symbol
// properties and the array iterator prototypes. Together that is about
// 18 KB of heap per VU, most of what an idle VU's script costs, for builtins
// the script seldom uses. cheaperInterop replaces the two with versions
// that walk the same property names by index: the same properties, in the
// same order, with the same getters, so a script sees the same objects.
// The new __copyProps also lets go of the last property descriptor it
// read, which the getters it made kept alive with their scope.
// (They differ only for a script that makes an enumerable property of
// Object.prototype, or replaces the array iterator, before a module it
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

// getOwnPropNames is esbuild's declaration of the helper both rewrites
// walk names with.
const getOwnPropNames = "\nvar __getOwnPropNames = Object.getOwnPropertyNames;\n"

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
		needs: getOwnPropNames,
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
      if (key = keys[i], !__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return desc = void 0, to;
};
`,
		needs: getOwnPropNames,
	},
}

// cheaperInterop rewrites the helpers at the top of esbuild's output code,
// before the first file's code (which starts with a comment naming the
// file, at the start of a line).
func cheaperInterop(code string) string {
	end := strings.Index(code, "\n//")
	if end < 0 {
		return code
	}
	helpers := code[:end+1]
	for _, r := range helperRewrites {
		if strings.Contains(helpers, r.needs) {
			helpers = strings.Replace(helpers, r.esbuild, r.cheaper, 1)
		}
	}
	return helpers + code[end+1:]
}
