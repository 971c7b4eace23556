package platform

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// wantWake waits for a wake of c, which must come without any polling of
// the test's: a minute is a failure, not a pace.
func wantWake(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(time.Minute):
		t.Fatalf("no wake after %s", what)
	}
}

// wantNoWake checks that c holds no wake now.
func wantNoWake(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
		t.Fatalf("a wake after %s", what)
	default:
	}
}

// TestNotifyWakesWatchers: Notify, from this process or another, wakes
// every watch of the file and no watch of another file; wakes that find
// a watch's channel full coalesce; a stopped watch hears nothing, and the
// last stop ends the inotify reader (the leak check of TestMain).
func TestNotifyWakesWatchers(t *testing.T) {
	dir := t.TempDir()
	name, other := filepath.Join(dir, "k.wake"), filepath.Join(dir, "other.wake")
	fsys := OSFS().(Notifier)
	a, stopA, err := fsys.Watch(name)
	if err != nil {
		t.Fatal(err)
	}
	b, stopB, err := fsys.Watch(name)
	if err != nil {
		t.Fatal(err)
	}
	o, stopO, err := fsys.Watch(other)
	if err != nil {
		t.Fatal(err)
	}
	defer stopO()
	for range 3 {
		if err := fsys.Notify(name); err != nil {
			t.Fatal(err)
		}
	}
	wantWake(t, a, "Notify")
	wantWake(t, b, "Notify")
	// Another process's write wakes them too: the kernel tells, not this
	// process. A wake of the other file shows that events have arrived.
	if out, err := exec.Command("sh", "-c", `printf x 1<>"$1"; printf x 1<>"$2"`, "sh", name, other).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	wantWake(t, o, "a write of the other file")
	wantWake(t, a, "another process's write")
	wantWake(t, b, "another process's write")
	stopA()
	stopA()
	if err := fsys.Notify(other); err != nil {
		t.Fatal(err)
	}
	wantWake(t, o, "Notify of the other file")
	wantNoWake(t, b, "Notify of the other file")
	wantNoWake(t, a, "its stop")
	stopB()
}

// TestNotifyRefusesPlantedFiles: Notify and Watch write into and watch
// only a regular file of this user with one link, never through a link,
// and leave anything else as it is.
func TestNotifyRefusesPlantedFiles(t *testing.T) {
	dir := t.TempDir()
	fsys := OSFS().(Notifier)
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link, hard, fifo := filepath.Join(dir, "link"), filepath.Join(dir, "hard"), filepath.Join(dir, "fifo")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(target, hard); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]error{link: ErrSymlink, hard: ErrLinked, fifo: ErrNotRegular} {
		if err := fsys.Notify(name); !errors.Is(err, want) {
			t.Errorf("Notify(%s) = %v, want %v", filepath.Base(name), err, want)
		}
		if _, _, err := fsys.Watch(name); !errors.Is(err, want) {
			t.Errorf("Watch(%s) = %v, want %v", filepath.Base(name), err, want)
		}
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != "keep" {
		t.Fatalf("the target reads %q, %v", data, err)
	}
}
