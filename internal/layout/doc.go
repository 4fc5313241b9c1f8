// Package layout holds only tests: the import rules between tokex's
// top-level folders and between the packages of collector, runner, tui and
// internal, checked against every Go file; README.md ("Layout") and
// docs/layout.md draw them, generated from the rules.
package layout
