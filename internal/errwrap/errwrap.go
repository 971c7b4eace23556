// Package errwrap builds the wrapped errors that fmt.Errorf builds with
// %w, for the packages that a small program links (platform, plock):
// fmt, with the reflection and float formatting it keeps, is about
// 280 kB of such a program, more than the lock-file code itself. Those
// packages write their messages with string concatenation and strconv.
package errwrap

// New returns an error that reads msg + ": " + err's text and wraps err:
// fmt.Errorf(msg+": %w", err).
func New(msg string, err error) error { return &wrapped{prefix: msg + ": ", err: err} }

// Suffix returns an error that reads err's text + suffix and wraps err:
// fmt.Errorf("%w"+suffix, err).
func Suffix(err error, suffix string) error { return &wrapped{err: err, suffix: suffix} }

// Text is err's text as fmt's %v prints it, "<nil>" for nil.
func Text(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

type wrapped struct {
	prefix, suffix string
	err            error
}

func (w *wrapped) Error() string { return w.prefix + Text(w.err) + w.suffix }

func (w *wrapped) Unwrap() error { return w.err }
