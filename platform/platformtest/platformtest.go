package platformtest

import (
	"testing"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/sqlite"
)

// Fake is a platform whose clock, process table and file faults a test
// controls. Its files are real, in a temporary directory.
type Fake struct {
	Platform  *platform.Platform
	Clock     *Clock
	Processes *Processes
	FS        *FS
	// Dir is a fresh directory for the test's files, removed when the
	// test ends.
	Dir string
}

// Option changes what New builds.
type Option func(*Fake)

// WithoutSQLite builds a platform that has no SQLite, so that callers
// take their file fallbacks.
func WithoutSQLite() Option {
	return func(f *Fake) { f.Platform.SQLite = nil }
}

// New returns a fake platform: a Clock at Epoch, a Processes table whose
// Self runs, real files (with injectable faults) in t.TempDir(), and the
// SQLite of platform/sqlite unless WithoutSQLite is given.
func New(t testing.TB, opts ...Option) *Fake {
	f := &Fake{Clock: NewClock(), Processes: NewProcesses(), FS: NewFS(platform.OSFS()), Dir: t.TempDir()}
	f.Platform = &platform.Platform{FS: f.FS, Process: f.Processes, Clock: f.Clock, SQLite: sqlite.Opener()}
	for _, o := range opts {
		o(f)
	}
	return f
}

// As returns a copy of the platform that plays the process id names:
// same clock, files and table, but Self is id.
func (f *Fake) As(id platform.Identity) *platform.Platform {
	p := *f.Platform
	p.Process = f.Processes.As(id)
	return &p
}
