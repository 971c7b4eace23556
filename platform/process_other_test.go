//go:build !linux

package platform

import "errors"

// deniedProbeReport is exercised on linux only.
func deniedProbeReport() (string, error) { return "", errors.ErrUnsupported }
