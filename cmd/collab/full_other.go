//go:build !unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// execFull runs collab-full at path as a child with this process's
// standard files, and returns its exit status: windows replaces no
// process.
func execFull(path string, argv []string, stderr io.Writer) int {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintf(stderr, "collab: run %s: %v\n", path, err)
		return 1
	}
	return 0
}
