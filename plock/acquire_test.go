package plock

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/lockbackend"
	"github.com/rivus/collab/internal/sqliteos"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/policy"
)

func TestAcquireHeldErrorNamesHolder(t *testing.T) {
	errNoProc := errors.New("no /proc")
	tests := []struct {
		name string
		opts []platformtest.Option
		// setup makes f's own process hold the lock at path and returns
		// the holder a contender should be told of.
		setup func(t *testing.T, f *platformtest.Fake, path string) *platform.Identity
	}{
		{"sqlite stamp", nil, func(t *testing.T, f *platformtest.Fake, path string) *platform.Identity {
			mustAcquire(t, f.Platform, path)
			id := self(t, f)
			return &id
		}},
		{"sqlite holder without identity", nil, func(t *testing.T, f *platformtest.Fake, path string) *platform.Identity {
			f.Processes.FailSelf(errNoProc)
			mustAcquire(t, f.Platform, path)
			return nil
		}},
		{"lock file", []platformtest.Option{platformtest.WithoutSQLite()}, func(t *testing.T, f *platformtest.Fake, path string) *platform.Identity {
			mustAcquire(t, f.Platform, path)
			id := self(t, f)
			return &id
		}},
		{"empty lock file", []platformtest.Option{platformtest.WithoutSQLite()}, func(t *testing.T, f *platformtest.Fake, path string) *platform.Identity {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, f.Clock.Now(), f.Clock.Now()); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.New(t, tt.opts...)
			path := lockPath(f)
			want := tt.setup(t, f, path)
			other := otherProcess(f, f.Processes.Start())
			held := mustHeld(t, other, path)
			if !sameHolder(held.Holder, want) {
				t.Errorf("HeldError.Holder = %s, want %s", describe(held.Holder), describe(want))
			}
			if held.Path != path {
				t.Errorf("HeldError.Path = %q, want %q", held.Path, path)
			}
			if !strings.Contains(held.Error(), path) {
				t.Errorf("HeldError %q does not name %s", held, path)
			}
		})
	}
}

func TestAcquireWaitsForHolder(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			path := lockPath(f)
			other := otherProcess(f, f.Processes.Start())
			theirs := mustAcquire(t, other, path)

			ch := goAcquire(context.Background(), f.Platform, path, Options{Wait: true})
			waitTimers(t, f.Clock, 1) // busy, backing off
			select {
			case r := <-ch:
				t.Fatalf("Acquire with Wait returned %v, %v while another process holds the lock", r.lock, r.err)
			default:
			}
			if err := theirs.Release(); err != nil {
				t.Fatal(err)
			}
			f.Clock.Advance(maxBackoff)
			r := receive(t, ch)
			if r.err != nil {
				t.Fatalf("Acquire with Wait after the holder released: %v", r.err)
			}
			defer r.lock.Release()
			if id := self(t, f); !sameHolder(r.lock.Holder(), &id) {
				t.Errorf("Holder() = %s, want %s", describe(r.lock.Holder()), id)
			}
		})
	}
}

func TestAcquireCancelWhileBackingOffPassesTurn(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			path := lockPath(f)
			key := keyOf(t, f.Platform, path)
			mustAcquire(t, otherProcess(f, f.Processes.Start()), path)

			cause := errors.New("operator gave up")
			ctxA, cancelA := context.WithCancelCause(context.Background())
			defer cancelA(nil)
			chA := goAcquire(ctxA, f.Platform, path, Options{Wait: true})
			waitTimers(t, f.Clock, 1) // A backs off against the other process
			ctxB, cancelB := context.WithCancelCause(context.Background())
			defer cancelB(nil)
			chB := goAcquire(ctxB, f.Platform, path, Options{Wait: true})
			waitTurns(t, "B queued behind A", func() bool { return len(waitingLocked(key)) == 1 })
			tb := waiting(key)[0]

			cancelA(cause)
			if r := receive(t, chA); !errors.Is(r.err, cause) {
				t.Fatalf("cancelled A returned %v, %v; want its cause %v", r.lock, r.err, cause)
			}
			// A's turn went to B, which attempts and backs off in turn.
			waitTurns(t, "B owns the turn", func() bool {
				q := turns.queues[key]
				return q != nil && q.owner == tb && len(q.waiting) == 0
			})
			waitTimers(t, f.Clock, 1)
			cancelB(cause)
			if r := receive(t, chB); !errors.Is(r.err, cause) {
				t.Fatalf("cancelled B returned %v, %v; want its cause %v", r.lock, r.err, cause)
			}
		})
	}
}

func TestAcquireDoneContextReturnsCause(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			cause := errors.New("shutting down")
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(cause)
			before := listing(t, f.Dir)
			l, err := Acquire(ctx, f.Platform, lockPath(f), Options{Wait: true})
			if !errors.Is(err, cause) {
				t.Fatalf("Acquire with a done context = %v, %v; want its cause", l, err)
			}
			if after := listing(t, f.Dir); len(after) != len(before) {
				t.Errorf("Acquire with a done context created files: %v", after)
			}
		})
	}
}

// renamed is the generated turn policy under another name: a custom
// policy of the turn family.
type renamed struct{ policy.Policy }

func (renamed) Name() string { return "MyTurn" }

func TestAcquirePolicyFamily(t *testing.T) {
	tests := []struct {
		name    string
		pol     policy.Policy
		wantErr string // "" means Acquire succeeds
	}{
		{"default", nil, ""},
		{"generated turn", fsm.TurnPolicy, ""},
		{"custom turn", renamed{fsm.TurnPolicy}, ""},
		{"compiled turn table", policy.Compile(fsm.TurnPolicy.Table()), ""},
		{"lane", fsm.LanePolicy, `"lane"`},
		{"lease", fsm.LeasePolicy, `"lease"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.New(t)
			path := lockPath(f)
			l, err := Acquire(context.Background(), f.Platform, path, Options{Policy: tt.pol})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Acquire with policy %v: %v", tt.pol, err)
				}
				if err := l.Release(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				l.Release()
				t.Fatalf("Acquire with a policy of family %s succeeded", tt.pol.Family())
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.pol.Name()) {
				t.Errorf("error %q does not name the policy %s and its family %s", err, tt.pol.Name(), tt.wantErr)
			}
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Arg != "Policy" || !strings.Contains(ae.Reason, `want "turn"`) {
				t.Errorf("Acquire with a %s policy = %#v, want an *ArgError on Policy that wants \"turn\"", tt.pol.Family(), err)
			}
			if exists(t, path) {
				t.Errorf("Acquire with a wrong policy created %s", path)
			}
		})
	}
}

// In a program that links platform/sqlite, as this test binary does, a
// nil platform is sqlite.OS(): the lock is a SQLite database, and the
// callers that pass nil or sqlite.OS() take turns in one queue.
func TestNilPlatformIsSQLiteOS(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "daemon.lock")
	l, err := Acquire(ctx, nil, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if held, err := IsHeld(ctx, nil, path); err != nil || !held {
		t.Fatalf("IsHeld(nil platform) = %v, %v; want true", held, err)
	}
	if r, err := Inspect(ctx, nil, path); err != nil || !r.Held || !sameHolder(r.Holder, l.Holder()) {
		t.Fatalf("Inspect(nil platform) = %+v, %v; want held by %s", r, err, describe(l.Holder()))
	}
	_, err = Acquire(ctx, sqlite.OS(), path, Options{})
	var he *HeldError
	if !errors.As(err, &he) || !errors.Is(err, ErrHeld) {
		t.Fatalf("Acquire through sqlite.OS() beside a nil platform's lock = %v, want a *HeldError", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	// Read only now: closing a descriptor of the file would drop the
	// holder's lock.
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(data), "SQLite format 3\x00") {
		t.Fatalf("the lock file is not a SQLite database (%v)", err)
	}
}

// unlinkSQLite makes the rest of the test run as a program that does not
// link platform/sqlite, which this test binary does: what its init
// registered is taken back until the test ends.
func unlinkSQLite(t *testing.T) {
	registered, mode := sqliteos.OS, lockbackend.SQLite
	sqliteos.OS, lockbackend.SQLite = nil, nil
	t.Cleanup(func() { sqliteos.OS, lockbackend.SQLite = registered, mode })
}

// ownSQLite is a SQLite of the caller's own, which plock cannot open
// without its SQLite mode linked.
type ownSQLite struct{}

func (ownSQLite) Open(string, platform.SQLiteOptions) (*sql.DB, error) {
	panic("plock opened a SQLite without its SQLite mode linked")
}

// In a program that links neither platform/sqlite nor the kernel's locks,
// plock has no SQLite mode: a platform with a SQLite of the caller's own
// is an *ArgError from each entry point saying what to import, and
// nothing is created.
func TestPlatformWithSQLiteWithoutTheModeIsArgError(t *testing.T) {
	unlinkSQLite(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "daemon.lock")
	p := *platform.OS()
	p.SQLite = ownSQLite{}
	check := func(call string, err error) {
		t.Helper()
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != "Platform" || ae.Reason != sqliteNotLinked {
			t.Errorf("%s = %v, want an *ArgError on Platform: %s", call, err, sqliteNotLinked)
		}
	}
	l, err := Acquire(context.Background(), &p, path, Options{})
	if l != nil {
		t.Error("Acquire returned a lock")
	}
	check("Acquire", err)
	_, err = IsHeld(context.Background(), &p, path)
	check("IsHeld", err)
	_, err = Inspect(context.Background(), &p, path)
	check("Inspect", err)
	if !strings.Contains(sqliteNotLinked, "github.com/rivus/collab/platform/sqlite") {
		t.Errorf("the error %q does not say what to import", sqliteNotLinked)
	}
	if got := listing(t, dir); len(got) != 0 {
		t.Errorf("the calls created %v", got)
	}
}

// In a program that does not link platform/sqlite, a nil platform, which
// means the SQLite mode, is an *ArgError from each entry point, whatever
// the context, saying how to choose a mode; nothing is created. The
// lock-file mode, platform.OS(), needs no SQLite.
func TestNilPlatformWithoutSQLiteIsArgError(t *testing.T) {
	unlinkSQLite(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "daemon.lock")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ctx := range []context.Context{context.Background(), done} {
		check := func(call string, err error) {
			t.Helper()
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Arg != "Platform" || ae.Reason != nilWithoutSQLite {
				t.Errorf("%s with a nil platform and no SQLite linked = %v, want an *ArgError on Platform: %s", call, err, nilWithoutSQLite)
			}
		}
		l, err := Acquire(ctx, nil, path, Options{Wait: true})
		if l != nil {
			t.Error("Acquire with a nil platform and no SQLite linked returned a lock")
		}
		check("Acquire", err)
		held, err := IsHeld(ctx, nil, path)
		if held {
			t.Error("IsHeld with a nil platform and no SQLite linked = true")
		}
		check("IsHeld", err)
		r, err := Inspect(ctx, nil, path)
		if r != (Report{}) {
			t.Errorf("Inspect with a nil platform and no SQLite linked = %+v", r)
		}
		check("Inspect", err)
	}
	for _, what := range []string{"github.com/rivus/collab/platform/sqlite", "platform.OS()", "lock-file mode"} {
		if !strings.Contains(nilWithoutSQLite, what) {
			t.Errorf("the error %q does not say %q", nilWithoutSQLite, what)
		}
	}
	if got := listing(t, dir); len(got) != 0 {
		t.Errorf("calls with a nil platform and no SQLite linked created %v", got)
	}
	l, err := Acquire(context.Background(), platform.OS(), path, Options{})
	if err != nil {
		t.Fatalf("Acquire in lock-file mode without SQLite linked: %v", err)
	}
	if got := readStamp(t, path); !sameHolder(&got, l.Holder()) {
		t.Errorf("the lock file holds %s, want this process %s", got, describe(l.Holder()))
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// A platform without the FS or Process every call uses is an *ArgError
// naming it from each entry point, whatever the context, and nothing is
// created.
func TestIncompletePlatformIsArgError(t *testing.T) {
	f := platformtest.New(t, platformtest.WithoutSQLite())
	path := lockPath(f)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	platforms := []struct {
		name   string
		p      *platform.Platform
		reason string
	}{
		{"zero", &platform.Platform{}, "has no FS"},
		{"no process", &platform.Platform{FS: f.FS}, "has no Process"},
	}
	for _, tp := range platforms {
		for _, ctx := range []context.Context{context.Background(), done} {
			check := func(call string, err error) {
				t.Helper()
				var ae *ArgError
				want := "plock: invalid argument: Platform " + tp.reason
				if !errors.As(err, &ae) || ae.Arg != "Platform" || err.Error() != want {
					t.Errorf("%s with a %s platform = %v, want an *ArgError: %q", call, tp.name, err, want)
				}
			}
			l, err := Acquire(ctx, tp.p, path, Options{Wait: true, Policy: fsm.LanePolicy})
			if l != nil {
				t.Errorf("Acquire with a %s platform returned a lock", tp.name)
			}
			check("Acquire", err)
			held, err := IsHeld(ctx, tp.p, path)
			if held {
				t.Errorf("IsHeld with a %s platform = true", tp.name)
			}
			check("IsHeld", err)
			r, err := Inspect(ctx, tp.p, path)
			if r != (Report{}) {
				t.Errorf("Inspect with a %s platform = %+v", tp.name, r)
			}
			check("Inspect", err)
		}
	}
	if got := listing(t, f.Dir); len(got) != 0 {
		t.Errorf("calls with a bad platform created %v", got)
	}
}

// While a task of this process only attempts the lock (another process
// holds it), a second task's HeldError must not name this process: it
// holds nothing. Only the other process, or nil (unknown), is true.
func TestHeldErrorDoesNotNameAnAttemptingTaskAsHolder(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			path := lockPath(f)
			theirID := f.Processes.Start()
			mustAcquire(t, otherProcess(f, theirID), path)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := goAcquire(ctx, f.Platform, path, Options{Wait: true})
			waitTimers(t, f.Clock, 1) // the first task backs off: it owns the turn, not the lock

			held := mustHeld(t, f.Platform, path)
			if held.Holder != nil && *held.Holder != theirID {
				t.Errorf("HeldError.Holder = %s while this process only attempts; want %s or nil", held.Holder, theirID)
			}
			r, err := Inspect(context.Background(), f.Platform, path)
			if err != nil || !r.Held || r.Holder != nil && *r.Holder != theirID {
				t.Errorf("Inspect = {%v %s}, %v while this process only attempts; want held by %s or unknown", r.Held, describe(r.Holder), err, theirID)
			}
			cancel()
			if r := receive(t, ch); !errors.Is(r.err, context.Canceled) {
				t.Fatalf("cancelled Acquire = %v, %v", r.lock, r.err)
			}
		})
	}
}

func TestAcquireWaitBackoffDoublesToMax(t *testing.T) {
	f := platformtest.New(t, platformtest.WithoutSQLite())
	path := lockPath(f)
	theirs := mustAcquire(t, otherProcess(f, f.Processes.Start()), path)
	ch := goAcquire(context.Background(), f.Platform, path, Options{Wait: true})
	want := []time.Duration{2, 4, 8, 16, 32, 64, 100, 100}
	for i, d := range want {
		d *= time.Millisecond
		waitTimers(t, f.Clock, 1)
		// Advance is synchronous: a timer that falls due is gone from the
		// clock when it returns.
		if f.Clock.Advance(d-time.Microsecond) != 0 {
			t.Fatalf("backoff #%d was shorter than %v", i+1, d)
		}
		if i == len(want)-1 {
			if err := theirs.Release(); err != nil {
				t.Fatal(err)
			}
		}
		if f.Clock.Advance(time.Microsecond) != 1 {
			t.Fatalf("backoff #%d was longer than %v", i+1, d)
		}
	}
	r := receive(t, ch)
	if r.err != nil {
		t.Fatalf("Acquire after the holder released: %v", r.err)
	}
	if err := r.lock.Release(); err != nil {
		t.Fatal(err)
	}
}
