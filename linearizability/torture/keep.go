package torture

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvKeepDir is the environment variable that names the directory under
// which failing campaigns keep their evidence, unless Config.KeepDir
// does (see the package doc): a CI job points it at a directory it
// uploads.
const EnvKeepDir = "COLLAB_KEEP_DIR"

// keepBase is the directory under which a failing campaign of cfg keeps
// its evidence: KeepDir, else $COLLAB_KEEP_DIR, else os.TempDir().
func keepBase(cfg Config) string {
	if cfg.KeepDir != "" {
		return cfg.KeepDir
	}
	if d := os.Getenv(EnvKeepDir); d != "" {
		return d
	}
	return os.TempDir()
}

// keep keeps the evidence of a failed campaign of cfg where it outlives
// the run directory, and returns where: Dir itself with DirKept, else a
// new directory under keepBase, private to this user, that holds a copy
// of the run directory and of html, the visualisation, if it lies
// outside. A copy that fails part-way returns its directory with the
// error: what was copied is still evidence.
func keep(cfg Config, html string) (string, error) {
	if cfg.DirKept {
		return cfg.Dir, nil
	}
	base := keepBase(cfg)
	if _, in := within(cfg.Dir, base); in {
		return "", fmt.Errorf("torture: cannot keep the evidence of the failed campaign of %s in %s: it is inside the run directory", cfg.Dir, base)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("torture: keeping the evidence of the failed campaign of %s: %w", cfg.Dir, err)
	}
	kept, err := os.MkdirTemp(base, fmt.Sprintf("collab-campaign-seed%d-", cfg.Seed))
	if err != nil {
		return "", fmt.Errorf("torture: keeping the evidence of the failed campaign of %s: %w", cfg.Dir, err)
	}
	err = copyTree(cfg.Dir, kept)
	if _, in := within(cfg.Dir, html); html != "" && !in {
		err = errors.Join(err, copyFile(html, filepath.Join(kept, filepath.Base(html))))
	}
	if err != nil {
		return kept, fmt.Errorf("torture: keeping the evidence of the failed campaign of %s in %s: %w", cfg.Dir, kept, err)
	}
	return kept, nil
}

// keptPath is where the copy of path, a file of the run directory dir or
// the visualisation outside it, lies in kept (see keep).
func keptPath(dir, kept, path string) string {
	if rel, in := within(dir, path); in {
		return filepath.Join(kept, rel)
	}
	return filepath.Join(kept, filepath.Base(path))
}

// within reports whether path is dir or lies under it, and its path
// relative to dir.
func within(dir, path string) (string, bool) {
	d, err1 := filepath.Abs(dir)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return "", false
	}
	rel, err := filepath.Rel(d, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// copyTree copies the directories and regular files under src into dst,
// which exists. Links, sockets and devices are left out: a store may
// leave a socket, and a link may lead out of the run directory. A file
// that cannot be copied is reported, and the others are copied still.
func copyTree(src, dst string) error {
	var errs []error
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case rel == ".":
		case d.IsDir():
			if err := os.Mkdir(to, 0o700); err != nil {
				errs = append(errs, err)
				return filepath.SkipDir
			}
		case d.Type().IsRegular():
			errs = append(errs, copyFile(path, to))
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// copyFile copies the regular file src to dst, a new file only this user
// may read.
func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return nil
}

// KeptError is the error of a campaign that failed after its workers
// started (a worker that ended on its own, a missed target, a history
// that could not be read), whose evidence Run kept in Dir (see the
// package doc).
type KeptError struct {
	Err error
	Dir string
}

func (e *KeptError) Error() string { return fmt.Sprintf("%v (evidence kept in %s)", e.Err, e.Dir) }

// Unwrap returns the campaign's error.
func (e *KeptError) Unwrap() error { return e.Err }

// keepFailed keeps the evidence of a failed campaign of cfg (see keep):
// res, which may be nil, failed or its check returned err. It notes
// where in res (Kept, and HTML, which then names the copy) and in err,
// which it returns. A copy that fails does not hide the failure it was
// to keep: its error goes to res.KeepErr, or joins err.
func keepFailed(cfg Config, res *Result, err error) (*Result, error) {
	html := ""
	if res != nil {
		html = res.HTML
	}
	kept, kerr := keep(cfg, html)
	if res != nil {
		res.Kept, res.KeepErr = kept, kerr
		if kept != "" && html != "" && !cfg.DirKept {
			res.HTML = keptPath(cfg.Dir, kept, html)
		}
	}
	if err == nil {
		return res, nil
	}
	if res == nil && kerr != nil {
		err = errors.Join(err, kerr)
	}
	if kept == "" || cfg.DirKept {
		return res, err
	}
	return res, &KeptError{Err: err, Dir: kept}
}
