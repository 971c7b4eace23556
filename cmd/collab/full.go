package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/rivus/collab/internal/command"
)

// runFull returns the command name run by collab-full, in this process's
// place, with this process's arguments, environment and standard files:
// whatever the command's stdin, stdout and stderr are, they are this
// process's own (main passes them).
func runFull(name string) command.RunFunc {
	return func(_ []string, _ io.Reader, _, stderr io.Writer) int {
		path, err := findFull()
		if err != nil {
			fmt.Fprintf(stderr, "collab %s: %v\n", name, err)
			return 1
		}
		return execFull(path, append([]string{fullName}, os.Args[1:]...), stderr)
	}
}

// findFull returns collab-full's path: beside this executable (links
// resolved), where make install and go install put the two, or else on
// PATH.
func findFull() (string, error) {
	exe := fullName
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		beside := filepath.Join(filepath.Dir(self), exe)
		if st, err := os.Stat(beside); err == nil && st.Mode().IsRegular() {
			return beside, nil
		}
	}
	path, err := exec.LookPath(fullName)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("this command is run by %s, which is neither beside collab nor on PATH: install both (make install, or go install github.com/rivus/collab/cmd/...), or run %s directly", fullName, fullName)
	}
	return path, err
}
