package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rivus/collab/lease/store"
)

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key    string
		reason string // "" for a valid key
	}{
		{"task:42", ""},
		{"a/../b", ""},
		{"ü", ""},
		{strings.Repeat("k", store.MaxKeyLen), ""},
		{"", "empty"},
		{strings.Repeat("k", store.MaxKeyLen+1), "257 bytes, more than 256"},
		{"a\x00", "contains NUL"},
		{"\xc3", "not valid UTF-8"},
	}
	for _, tt := range tests {
		err := store.ValidateKey(tt.key)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("ValidateKey(%q) = %v, want nil", tt.key, err)
			}
			continue
		}
		var ke *store.KeyError
		if !errors.As(err, &ke) || ke.Key != tt.key || ke.Reason != tt.reason || !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %#v, want a *KeyError with reason %q", tt.key, err, tt.reason)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	cause := errors.New("disk on fire")
	long := strings.Repeat("x", 300)
	tests := []struct {
		err  error
		want string
	}{
		{&store.RevisionConflictError{Key: "task:42", Expected: 3, Actual: 4},
			`lease: revision conflict on key "task:42": expected revision 3, found 4`},
		{&store.RepositoryError{Op: "save", Key: "a/b", Err: cause},
			`lease: repository save of key "a/b": disk on fire`},
		{&store.RepositoryError{Op: "open", Err: cause},
			`lease: repository open: disk on fire`},
		{&store.RepositoryError{Op: "load", Key: "k", Err: &store.CorruptRecordError{Key: "k", Where: "dir/k.json", Err: cause}},
			`lease: repository load of key "k": corrupt lease record for key "k" in dir/k.json: disk on fire`},
		{&store.KeyError{Key: "", Reason: "empty"}, `lease: invalid key "": empty`},
		{&store.KeyError{Key: long, Reason: "too long"},
			`lease: invalid key "` + long[:80] + `"... (300 bytes): too long`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tt.want)
		}
	}
}

// TestErrorsMatch: every typed error matches its sentinel through the
// wrapping the repositories use, and no other.
func TestErrorsMatch(t *testing.T) {
	corrupt := &store.RepositoryError{Op: "load", Key: "k", Err: &store.CorruptRecordError{Key: "k", Where: "f", Err: errors.New("bad")}}
	conflict := fmt.Errorf("renew: %w", &store.RevisionConflictError{Key: "k"})
	key := &store.KeyError{Key: "", Reason: "empty"}
	sentinels := []error{store.ErrCorruptRecord, store.ErrRevisionConflict, store.ErrInvalidKey}
	for i, err := range []error{corrupt, conflict, key} {
		for j, s := range sentinels {
			if got := errors.Is(err, s); got != (i == j) {
				t.Errorf("errors.Is(%v, %v) = %v", err, s, got)
			}
		}
	}
	var ce *store.CorruptRecordError
	if !errors.As(corrupt, &ce) || ce.Where != "f" {
		t.Errorf("errors.As(%v, *CorruptRecordError) failed", corrupt)
	}
}
