package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"
)

// scratch is a copy of the working tree in a temporary directory, in a
// git repository of its own, where the mutants are applied and reset.
type scratch struct {
	dir  string // the temporary directory
	repo string // the copy
	bin  string // collab-full, built from the mutated copy (collab beside it)
	runs string // the campaigns' run directories
}

// gitIdentity lets the copy commit, whatever the user's configuration.
var gitIdentity = []string{"-c", "user.name=mutants", "-c", "user.email=mutants@localhost",
	"-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"}

// newScratch copies the files git tracks or would track (tracked, and
// untracked but not ignored) of root's working tree, and commits them in
// the copy.
func newScratch(ctx context.Context, root string) (*scratch, error) {
	dir, err := os.MkdirTemp("", "collab-mutants-")
	if err != nil {
		return nil, err
	}
	s := &scratch{dir: dir, repo: filepath.Join(dir, "repo"), bin: filepath.Join(dir, "bin", "collab-full"), runs: filepath.Join(dir, "runs")}
	if err := s.fill(ctx, root); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

func (s *scratch) fill(ctx context.Context, root string) error {
	list, err := output("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	for name := range strings.SplitSeq(list, "\x00") {
		if name == "" {
			continue
		}
		if err := copyEntry(filepath.Join(root, name), filepath.Join(s.repo, name)); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "the working tree"}} {
		if err := s.git(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies a file or symlink; one deleted from the working tree
// but still in the index is skipped.
func copyEntry(from, to string) error {
	fi, err := os.Lstat(from)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir(): // a submodule or a nested repository
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return os.Symlink(target, to)
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// reset brings the copy back to the working tree's state, removing what
// a mutant, a build or a test left.
func (s *scratch) reset(ctx context.Context) error {
	if err := s.git(ctx, "reset", "-q", "--hard"); err != nil {
		return err
	}
	if err := s.git(ctx, "clean", "-q", "-f", "-d", "-x"); err != nil {
		return err
	}
	if err := os.RemoveAll(s.runs); err != nil {
		return err
	}
	return os.MkdirAll(s.runs, 0o755)
}

// apply applies patch, or returns git apply's complaint: the patch is
// stale.
func (s *scratch) apply(ctx context.Context, patch string) error {
	if err := s.git(ctx, "apply", "--check", patch); err != nil {
		return err
	}
	return s.git(ctx, "apply", patch)
}

// git runs git in the copy, with a time bound; its error carries git's
// stderr.
func (s *scratch) git(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, "git", append(append([]string{"-C", s.repo}, gitIdentity...), args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("git %s: %s", args[0], msg)
	}
	return nil
}

// remove deletes the scratch directory and everything in it.
func (s *scratch) remove() {
	if err := os.RemoveAll(s.dir); err != nil {
		fmt.Fprintf(os.Stderr, "mutants: removing the scratch copy: %v\n", err)
	}
}

// output runs a short command and returns its stdout; its error carries
// the stderr.
func output(name string, args ...string) (string, error) {
	cmd := osexec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
