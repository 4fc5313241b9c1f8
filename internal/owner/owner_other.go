//go:build !unix

package owner

import "io/fs"

// Without a way to tell, a folder's owner is taken to be alive: nothing is
// removed.
func processExists(int) bool { return true }

func ownedByMe(fs.FileInfo) bool { return true }
