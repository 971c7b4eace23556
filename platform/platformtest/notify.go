package platformtest

import "github.com/rivus/collab/platform"

// Ops of platform.Notifier.
const (
	OpNotify Op = "Notify"
	OpWatch  Op = "Watch"
)

var _ platform.Notifier = (*FS)(nil)

// Notify implements platform.Notifier with the base file system's, and
// does nothing on one that has none (no watch can be waiting).
func (f *FS) Notify(name string) error {
	return runErr(f, OpNotify, name, func() error {
		if n, ok := f.base.(platform.Notifier); ok {
			return n.Notify(name)
		}
		return nil
	})
}

// Watch implements platform.Notifier with the base file system's, or
// fails with platform.ErrNoNotify.
func (f *FS) Watch(name string) (<-chan struct{}, func(), error) {
	type watch struct {
		wake <-chan struct{}
		stop func()
	}
	w, err := run(f, OpWatch, name, func() (watch, error) {
		n, ok := f.base.(platform.Notifier)
		if !ok {
			return watch{}, platform.ErrNoNotify
		}
		wake, stop, err := n.Watch(name)
		return watch{wake, stop}, err
	})
	return w.wake, w.stop, err
}
