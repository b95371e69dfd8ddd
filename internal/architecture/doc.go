// Package architecture holds no code, only a test: the dependency rules
// of docs/architecture.md, checked against the import graph that
// `go list -deps -json ./...` reports for the whole module, so that a
// change that breaks one fails CI. docs/contributing.md says how to read
// a failure.
package architecture
