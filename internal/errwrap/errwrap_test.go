package errwrap_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/rivus/collab/internal/errwrap"
)

// Each error reads as the fmt.Errorf it stands for, and wraps the same
// error.
func TestReadsAsFmtErrorf(t *testing.T) {
	inner := &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}
	tests := []struct {
		name      string
		got, want error
	}{
		{"New", errwrap.New("plock: lock file /x", inner), fmt.Errorf("plock: lock file /x: %w", inner)},
		{"New, empty message", errwrap.New("", inner), fmt.Errorf(": %w", inner)},
		{"Suffix", errwrap.Suffix(fs.ErrPermission, " (uid 7)"), fmt.Errorf("%w (uid 7)", fs.ErrPermission)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got.Error() != tt.want.Error() {
				t.Errorf("reads %q, want %q", tt.got, tt.want)
			}
			if errors.Unwrap(tt.got) != errors.Unwrap(tt.want) {
				t.Errorf("wraps %v, want %v", errors.Unwrap(tt.got), errors.Unwrap(tt.want))
			}
		})
	}
	if !errors.Is(errwrap.New("m", inner), fs.ErrNotExist) {
		t.Error("errors.Is does not see through New to the wrapped error's own chain")
	}
}

func TestText(t *testing.T) {
	for _, err := range []error{nil, errors.New("boom"), errwrap.New("a", nil)} {
		if got, want := errwrap.Text(err), fmt.Sprintf("%v", err); got != want {
			t.Errorf("Text(%#v) = %q, want %q as %%v prints it", err, got, want)
		}
	}
}
