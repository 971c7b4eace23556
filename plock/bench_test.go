package plock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/sqlite"
)

// Each measured benchmark reports its cost as a ratio to a floor: the
// least the operating system and SQLite must do for the same effect. The
// floor runs interleaved with the measured operation, one of each per
// iteration, so that both see the same load on the machine; its own time
// is kept out of ns/op. The floors also run alone, as their own
// sub-benchmarks.
func measure(b *testing.B, op, floor func()) {
	var floorTime time.Duration
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		floor()
		floorTime += time.Since(start)
		b.StartTimer()
		op()
	}
	b.ReportMetric(float64(b.Elapsed())/float64(floorTime), "ratio")
}

// loop runs op as a benchmark of its own.
func loop(b *testing.B, op func()) {
	for b.Loop() {
		op()
	}
}

func BenchmarkAcquireRelease(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	acquireRelease := func(p *platform.Platform, path string) func() {
		return func() {
			l, err := Acquire(ctx, p, path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(); err != nil {
				b.Fatal(err)
			}
		}
	}
	floorDB := filepath.Join(dir, "floor.db")
	if err := os.WriteFile(floorDB, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	first, err := Acquire(ctx, sqlite.OS(), floorDB, Options{}) // gives it its first page
	if err != nil {
		b.Fatal(err)
	}
	if err := first.Release(); err != nil {
		b.Fatal(err)
	}
	sqliteFloor := func() { sqliteExclusiveOnce(b, floorDB) }
	stamp := platform.Identity{Host: "h", BootID: "b", PID: 1, StartTime: 1}.Marshal()
	fileFloor := func() { linkOnce(b, filepath.Join(dir, "floor.lock"), stamp) }

	b.Run("sqlite", func(b *testing.B) {
		measure(b, acquireRelease(sqlite.OS(), filepath.Join(dir, "sqlite.lock")), sqliteFloor)
	})
	b.Run("sqlite-floor", func(b *testing.B) { loop(b, sqliteFloor) })
	b.Run("file", func(b *testing.B) {
		measure(b, acquireRelease(platform.OS(), filepath.Join(dir, "file.lock")), fileFloor)
	})
	b.Run("file-floor", func(b *testing.B) { loop(b, fileFloor) })
}

// sqliteExclusiveOnce is the floor of a SQLite process lock: open the
// database (one with a first page, as plock's is after its first
// acquisition) with exclusive locking, take the exclusive lock with BEGIN
// EXCLUSIVE, and close it, with nothing written or synced.
func sqliteExclusiveOnce(b *testing.B, path string) {
	db, err := sqlite.Opener().Open(path, platform.SQLiteOptions{ExclusiveLocking: true, BusyTimeout: firstBusyTimeout})
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		b.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
}

// linkOnce creates a temporary file, writes the stamp, links it to path,
// and unlinks both.
func linkOnce(b *testing.B, path string, stamp []byte) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(stamp); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Link(tmp, path); err != nil {
		b.Fatal(err)
	}
	if err := os.Remove(tmp); err != nil {
		b.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		b.Fatal(err)
	}
}

// sharedAttemptOnce makes one raw attempt at a shared lock on a held
// database, as a check must, and requires it to find the lock busy.
func sharedAttemptOnce(b *testing.B, path string) {
	db, err := sqlite.Opener().Open(path, platform.SQLiteOptions{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	var n int
	err = db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n)
	if code := platform.SQLiteCode(err); code != platform.SQLiteBusy {
		b.Fatalf("shared attempt on a held database: %v", err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
}
