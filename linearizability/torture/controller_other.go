//go:build !unix

package torture

import (
	"context"
	"errors"
)

// controller is unsupported without unix signals.
type controller struct{}

func newController(Config) (*controller, error) {
	return nil, errors.New("torture: campaigns need SIGKILL, SIGSTOP and SIGCONT (unix only): " + errors.ErrUnsupported.Error())
}

func (*controller) run(context.Context) (Stats, error) { return Stats{}, errors.ErrUnsupported }
func (*controller) close() error                       { return nil }
