// Package layout holds only a test: the import rules between tokex's top-level
// folders, as drawn in README.md ("Layout"), checked against every Go file.
package layout
