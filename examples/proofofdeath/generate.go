// Package proofofdeath is a custom lease policy: a holder on this process
// table is taken over only once its process is proven gone, one on another
// process table once it has been silent for the TTL. See lease.fsm.
package proofofdeath

//go:generate go run ../../gen/cmd/fsmgen -spec lease.fsm -out . -pkg proofofdeath
