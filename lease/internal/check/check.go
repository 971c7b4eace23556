// Package check holds what every repository of this module checks before
// it touches storage, so that they all refuse the same calls the same
// way (see the contract in package store).
package check

import (
	"context"

	"github.com/rivus/collab/lease/store"
)

// Call checks what every repository method checks first: the key, then
// the context.
func Call(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// Save checks what every Save checks first: the write, then the context.
func Save(ctx context.Context, key string, s store.Snapshot) error {
	if err := (store.Write{Key: key, Snapshot: s}).Validate(); err != nil {
		return err
	}
	return Call(ctx, key)
}

// Fill sets every element of errs to err: the results of a batch that
// fails as a whole.
func Fill(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}
