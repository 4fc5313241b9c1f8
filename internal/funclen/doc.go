// Package funclen holds only a test: no function outside tests and generated
// code is longer than 80 lines, except the allowlisted ones, which may only
// shrink.
package funclen
