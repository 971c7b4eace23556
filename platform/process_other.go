//go:build !linux && !darwin

package platform

import (
	"errors"

	"github.com/rivus/collab/internal/errwrap"
)

// errIdentityUnsupported is wrapped by Self on platforms without process
// identity; it matches errors.ErrUnsupported.
var errIdentityUnsupported = errwrap.New("process identity is not supported on this platform", errors.ErrUnsupported)

// OSProcess returns a Process that cannot identify processes: Self fails
// with an error matching errors.ErrUnsupported, and every judgement is
// Unknown, which callers treat as alive.
func OSProcess() Process { return unsupportedProcess{} }

type unsupportedProcess struct{}

func (unsupportedProcess) Self() (Identity, error) {
	return Identity{}, &SelfError{"process identity", errIdentityUnsupported}
}

func (unsupportedProcess) Judge(Identity) Verdict {
	return Verdict{Unknown, errIdentityUnsupported.Error()}
}
