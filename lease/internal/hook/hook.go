// Package hook lets the packages under lease ask the lease package what
// its exported API does not say, for their contract monitors: the lease
// package sets the hooks as it initialises.
package hook

// Closed reports whether Close has returned on a *lease.Lease. It is
// typed by any because this package cannot import lease, which imports
// it.
var Closed func(l any) bool
