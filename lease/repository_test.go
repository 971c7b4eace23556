package lease_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rivus/collab/lease"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		// A re-executed test binary: a child holds a fence or a lease
		// until killed or told to end, so the leak check belongs to the
		// parent only.
		if err := runChildMode(mode); err != nil {
			fmt.Fprintln(os.Stderr, "lease test child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key    string
		reason string // "" for a valid key
	}{
		{"task:42", ""},
		{"a/../b", ""},
		{"ü", ""},
		{strings.Repeat("k", lease.MaxKeyLen), ""},
		{"", "empty"},
		{strings.Repeat("k", lease.MaxKeyLen+1), "257 bytes, more than 256"},
		{"a\x00", "contains NUL"},
		{"\xc3", "not valid UTF-8"},
	}
	for _, tt := range tests {
		err := lease.ValidateKey(tt.key)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("ValidateKey(%q) = %v, want nil", tt.key, err)
			}
			continue
		}
		var ke *lease.KeyError
		if !errors.As(err, &ke) || ke.Key != tt.key || ke.Reason != tt.reason || !errors.Is(err, lease.ErrInvalidKey) {
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
		{&lease.RevisionConflictError{Key: "task:42", Expected: 3, Actual: 4},
			`lease: revision conflict on key "task:42": expected revision 3, found 4`},
		{&lease.RepositoryError{Op: "save", Key: "a/b", Err: cause},
			`lease: repository save of key "a/b": disk on fire`},
		{&lease.RepositoryError{Op: "open", Err: cause},
			`lease: repository open: disk on fire`},
		{&lease.RepositoryError{Op: "load", Key: "k", Err: &lease.CorruptRecordError{Key: "k", Where: "dir/k.json", Err: cause}},
			`lease: repository load of key "k": corrupt lease record for key "k" in dir/k.json: disk on fire`},
		{&lease.KeyError{Key: "", Reason: "empty"}, `lease: invalid key "": empty`},
		{&lease.KeyError{Key: long, Reason: "too long"},
			`lease: invalid key "` + long[:80] + `"... (300 bytes): too long`},
		{&lease.SchemaError{Path: "x.db", Version: 7, Supported: 1},
			`lease: sqlite database x.db has schema version 7; this version of collab supports 1`},
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
	corrupt := &lease.RepositoryError{Op: "load", Key: "k", Err: &lease.CorruptRecordError{Key: "k", Where: "f", Err: errors.New("bad")}}
	conflict := fmt.Errorf("renew: %w", &lease.RevisionConflictError{Key: "k"})
	key := &lease.KeyError{Key: "", Reason: "empty"}
	sentinels := []error{lease.ErrCorruptRecord, lease.ErrRevisionConflict, lease.ErrInvalidKey}
	for i, err := range []error{corrupt, conflict, key} {
		for j, s := range sentinels {
			if got := errors.Is(err, s); got != (i == j) {
				t.Errorf("errors.Is(%v, %v) = %v", err, s, got)
			}
		}
	}
	var ce *lease.CorruptRecordError
	if !errors.As(corrupt, &ce) || ce.Where != "f" {
		t.Errorf("errors.As(%v, *CorruptRecordError) failed", corrupt)
	}
}
