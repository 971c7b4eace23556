// Package ownqueue is a custom turn policy for plock: an acquisition that
// does not wait queues behind this process's own tasks, and gives up at
// once only when another process holds the lock. See turn.fsm.
package ownqueue

//go:generate go run ../../gen/cmd/fsmgen -spec turn.fsm -out . -pkg ownqueue
