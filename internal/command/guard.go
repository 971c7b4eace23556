package command

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rivus/collab/platform"
)

// The guard keeps a lock held for as long as any process of its command
// runs, even when collab itself is killed. SQLite's lock belongs to the
// collab process and ends with it; the command's background jobs, which
// no parent-death signal reaches, would run on unlocked. So, once it
// holds the lock, `collab lock` also takes an flock on PATH.guard and
// hands the locked file to the command as descriptor guardFD: the flock
// belongs to the open file, and lasts until every process holding it has
// ended or closed it. The next `collab lock` takes the lock, then the
// guard, and so waits (or exits 75) while any of them runs. A process
// that must outlive the lock (a daemon the command starts) closes the
// descriptor. plock's own callers do not look at the guard. A job of the
// command that runs `collab lock --wait` on the same path waits for
// itself: it holds the guard it waits for.
const (
	GuardSuffix = ".guard"
	guardFD     = 3 // the first of exec.Cmd's ExtraFiles
	GuardEnv    = "COLLAB_LOCK_FD"
)

// How often a waiting `collab lock` tries the guard again: flock has no
// notification that a file's last holder closed it.
const (
	guardFirstBackoff = 5 * time.Millisecond
	guardMaxBackoff   = 250 * time.Millisecond
)

// errGuardHeld: processes of a command that ran under the lock still run.
var errGuardHeld = errors.New("held by processes of an earlier command run under it, which still hold " + GuardSuffix)

// guardQuickTries is how many times a `collab lock` without --wait tries
// the guard before it reports it held: `collab lock status` holds a shared
// lock on it for an instant.
const guardQuickTries = 4

// takeGuard takes the guard of the lock at path: at once (after a few
// quick tries), or, with wait, once its last holder lets go, or ctx ends
// (ctx.Err()).
func takeGuard(ctx context.Context, p *platform.Platform, path string, wait bool) (platform.Unlocker, error) {
	pause := platform.Backoff{Clock: p.GetClock(), First: guardFirstBackoff, Max: guardMaxBackoff}
	for try := 1; ; try++ {
		u, err := p.FS.TryLock(path + GuardSuffix)
		switch {
		case errors.Is(err, platform.ErrLocked) && !wait && try >= guardQuickTries:
			return nil, errGuardHeld
		case !errors.Is(err, platform.ErrLocked):
			return u, err
		}
		if !wait {
			pause.Restart() // the quick tries all wait the first delay
		}
		if pause.Wait(ctx) != nil {
			return nil, ctx.Err()
		}
	}
}

// inheritGuard gives c the guard's file as descriptor guardFD, where the
// platform passes files to a child, and passes on the guards of the locks
// this collab runs under (a nested `collab lock outer -- collab lock
// inner -- …`) at the descriptors after it, listed in OuterGuardsEnv, so
// that the command keeps every outer lock's guard too: were this collab
// killed with the outer one, the outer lock would stay guarded while the
// command runs.
func inheritGuard(c *Child, guard platform.Unlocker, outer []*os.File) {
	f, ok := guard.(interface{ File() *os.File })
	if !ok || !passesFiles {
		return
	}
	c.Files = append([]*os.File{f.File()}, outer...)
	c.Env = append(c.Env, GuardEnv+"="+strconv.Itoa(guardFD))
	var fds []string
	for i := 1; i < len(c.Files); i++ {
		fds = append(fds, strconv.Itoa(guardFD+i))
	}
	c.Env = append(c.Env, OuterGuardsEnv+"="+strings.Join(fds, " "))
}

// OuterGuardsEnv lists the descriptors of the outer locks' guards that a
// nested collab lock passed on.
const OuterGuardsEnv = "COLLAB_LOCK_OUTER_FDS"

// outerGuards returns the guards this process inherited from the collab
// locks it runs under: the descriptors GuardEnv and OuterGuardsEnv name
// that are open regular files. RunLock calls it first, before it opens
// a file of its own, so that every descriptor it finds was inherited;
// the files stay referenced until the process ends. A descriptor that
// the command in between closed and opened again for another file is
// passed on as well, which does no harm.
func outerGuards() []*os.File {
	var files []*os.File
	for _, s := range strings.Fields(os.Getenv(GuardEnv) + " " + os.Getenv(OuterGuardsEnv)) {
		if n, err := strconv.Atoi(s); err == nil && n >= guardFD {
			if f := inheritedFile(n); f != nil {
				files = append(files, f)
			}
		}
	}
	return files
}
