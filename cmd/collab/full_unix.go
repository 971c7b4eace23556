//go:build unix

package main

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// execFull replaces this process with collab-full at path: the command
// keeps collab's pid, signals and exit status, and no collab waits for it.
func execFull(path string, argv []string, stderr io.Writer) int {
	err := syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(stderr, "collab: run %s: %v\n", path, err)
	return 1
}
