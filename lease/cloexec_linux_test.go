package lease_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/platform/platformtest"
)

// TestRepositoryDescriptorsNotInherited: while a lease is held and its
// fenced work runs, every descriptor of the SQLite and file repositories
// (databases, records, fences) is close-on-exec: a command the work starts
// never inherits one, and so never holds a fence on after this process.
func TestRepositoryDescriptorsNotInherited(t *testing.T) {
	for _, kind := range []string{"sqlite", "file"} {
		t.Run(kind, func(t *testing.T) {
			f := platformtest.New(t)
			m, _ := newManager(t, f.Platform, openFake(t, f, kind))
			l := mustAcquire(t, m, "k")
			err := l.RunFenced(t.Context(), func(ctx context.Context, _ lease.Token) error {
				out, err := exec.CommandContext(ctx, "ls", "-l", "/proc/self/fd/").CombinedOutput()
				if err != nil {
					t.Errorf("ls /proc/self/fd: %v\n%s", err, out)
				} else if strings.Contains(string(out), f.Dir) {
					t.Errorf("a command started by fenced work inherits descriptors of %s:\n%s", f.Dir, out)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
