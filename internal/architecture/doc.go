// Package architecture holds no code, only tests of rules about the
// whole tree, so that a change that breaks one fails CI: the dependency
// rules of docs/architecture.md, checked against the import graph that
// `go list -deps -json ./...` reports for the module; the -short skips,
// each naming the test that covers its code when short; and
// docs/architecture.md itself, whose package table, file paths and list
// of examples must match the tree; and the front door: README.md stays
// a short index, every relative link of README.md and docs/ names a file
// and a heading that exist, and docs/README.md links to every page.
// docs/contributing.md says how to read a failure.
package architecture
