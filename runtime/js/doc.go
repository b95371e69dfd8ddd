// Package js holds script loading and per-VU JavaScript runtimes.
//
// Compile turns a scenario script (JavaScript or TypeScript, ES modules or
// CommonJS) into one goja program with esbuild, once per run: relative
// imports are bundled in, bare imports ('llm', 'metrics', ...) stay
// require() calls that each VU resolves against the registered Go modules.
// Script.Instantiate then runs the program's init code in one VU's runtime
// and hands back its exports. Errors point at the original source files,
// lines and columns, mapped back through an inline source map.
//
// Nothing a script does may crash or hang the process: every script value
// that becomes Go text or data is read through package jsvalue, runtimes
// have a call-depth limit (MaxCallStackSize), init code is interrupted
// when the VU's context ends, and the files a script reads are capped
// (MaxScriptSize, MaxOpenSize).
package js
