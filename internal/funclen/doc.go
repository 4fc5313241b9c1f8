// Package funclen holds only a test: no function outside tests and generated
// code is longer than 80 lines. It has no allowlist: the last long functions
// were split.
package funclen
