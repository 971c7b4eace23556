package platformtest

import (
	"io/fs"
	"os"
	"sync"
	"testing"

	"github.com/rivus/collab/platform"
)

// Op names an FS operation, for fault injection.
type Op string

// The operations of platform.FS.
const (
	OpReadFile        Op = "ReadFile"
	OpReadOwnFile     Op = "ReadOwnFile"
	OpCreateExclusive Op = "CreateExclusive"
	OpWriteFileAtomic Op = "WriteFileAtomic"
	OpRename          Op = "Rename"
	OpRemove          Op = "Remove"
	OpMkdirAll        Op = "MkdirAll"
	OpStat            Op = "Stat"
	OpLstat           Op = "Lstat"
	OpReadDir         Op = "ReadDir"
	OpEvalSymlinks    Op = "EvalSymlinks"
	OpTryLock         Op = "TryLock"
)

// FS wraps a platform.FS and fails the operations a test chooses.
type FS struct {
	base  platform.FS
	mu    sync.Mutex
	fault func(op Op, name string) error
}

var _ platform.FS = (*FS)(nil)

// NewFS returns an FS that passes every operation to base until SetFault.
func NewFS(base platform.FS) *FS { return &FS{base: base} }

// SetFault makes every later operation first call fault, failing with its
// error when it returns one; nil removes the fault.
func (f *FS) SetFault(fault func(op Op, name string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fault
}

func (f *FS) check(op Op, name string) error {
	f.mu.Lock()
	fault := f.fault
	f.mu.Unlock()
	if fault == nil {
		return nil
	}
	return fault(op, name)
}

// run fails with the fault for op, if any, and otherwise does the operation.
func run[T any](f *FS, op Op, name string, do func() (T, error)) (T, error) {
	if err := f.check(op, name); err != nil {
		var zero T
		return zero, err
	}
	return do()
}

func runErr(f *FS, op Op, name string, do func() error) error {
	_, err := run(f, op, name, func() (struct{}, error) { return struct{}{}, do() })
	return err
}

// ReadOwnFile implements platform.FS.
func (f *FS) ReadOwnFile(name string, limit int) ([]byte, error) {
	return run(f, OpReadOwnFile, name, func() ([]byte, error) { return f.base.ReadOwnFile(name, limit) })
}

// ReadFile implements platform.FS.
func (f *FS) ReadFile(name string, limit int) ([]byte, error) {
	return run(f, OpReadFile, name, func() ([]byte, error) { return f.base.ReadFile(name, limit) })
}

// CreateExclusive implements platform.FS.
func (f *FS) CreateExclusive(name string, data []byte, perm fs.FileMode) error {
	return runErr(f, OpCreateExclusive, name, func() error { return f.base.CreateExclusive(name, data, perm) })
}

// WriteFileAtomic implements platform.FS.
func (f *FS) WriteFileAtomic(name string, data []byte, perm fs.FileMode) error {
	return runErr(f, OpWriteFileAtomic, name, func() error { return f.base.WriteFileAtomic(name, data, perm) })
}

// Rename implements platform.FS; the fault sees oldname.
func (f *FS) Rename(oldname, newname string) error {
	return runErr(f, OpRename, oldname, func() error { return f.base.Rename(oldname, newname) })
}

// Remove implements platform.FS.
func (f *FS) Remove(name string) error {
	return runErr(f, OpRemove, name, func() error { return f.base.Remove(name) })
}

// MkdirAll implements platform.FS.
func (f *FS) MkdirAll(name string, perm fs.FileMode) error {
	return runErr(f, OpMkdirAll, name, func() error { return f.base.MkdirAll(name, perm) })
}

// Stat implements platform.FS.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	return run(f, OpStat, name, func() (fs.FileInfo, error) { return f.base.Stat(name) })
}

// Lstat implements platform.FS.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	return run(f, OpLstat, name, func() (fs.FileInfo, error) { return f.base.Lstat(name) })
}

// ReadDir implements platform.FS.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	return run(f, OpReadDir, name, func() ([]fs.DirEntry, error) { return f.base.ReadDir(name) })
}

// EvalSymlinks implements platform.FS.
func (f *FS) EvalSymlinks(name string) (string, error) {
	return run(f, OpEvalSymlinks, name, func() (string, error) { return f.base.EvalSymlinks(name) })
}

// TryLock implements platform.FS.
func (f *FS) TryLock(name string) (platform.Unlocker, error) {
	return run(f, OpTryLock, name, func() (platform.Unlocker, error) { return f.base.TryLock(name) })
}

// DirNames lists the names in dir, hidden ones included, sorted, or
// fails the test.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
