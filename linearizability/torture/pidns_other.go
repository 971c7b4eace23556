//go:build !linux

package torture

import "syscall"

// pidNamespaces: pid namespaces are Linux's.
const pidNamespaces = false

func inNewPIDNamespace(*syscall.SysProcAttr) {}

func startedInNewPIDNamespace() (bool, error) { return false, nil }
