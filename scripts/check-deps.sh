#!/usr/bin/env bash
# check-deps.sh holds the packages to what they may link (make verify):
# collab, the command, links no SQLite, PostgreSQL, checker or campaign;
# the runtime links no generator, model checker or reference interpreter;
# lanes and plock link no SQLite either, nor plock's SQLite mode: a
# program that uses only lanes, or only plock's lock files, stays under
# 3 MB (see below); fsm imports policy alone;
# platform and lease link no driver; platform, plock and lanes no
# encoding/json.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=github.com/rivus/collab
status=0

# forbid PATTERN PACKAGE...: no package in the dependencies of PACKAGE... matches PATTERN.
forbid() {
	local pattern=$1
	shift
	local found
	found=$(go list -deps "$@" | grep -E "$pattern" || true)
	if [ -n "$found" ]; then
		echo "$* must not link:" $found
		status=1
	fi
}

forbid "^($mod/(gen|modelcheck|worldmodel)|github.com/qmuntal/stateless|github.com/jackc/pgx)" ./lanes ./plock ./lease ./platform/... ./fsm ./policy
forbid "^modernc.org/sqlite" ./lanes ./plock ./lease ./platform ./fsm ./policy
forbid "^$mod/internal/sqlitelock$" ./lanes ./plock ./lease ./platform ./fsm ./policy
forbid "^$mod/(platform|lanes|lease|plock|gen)" ./fsm ./policy
forbid "^encoding/json$" ./platform ./plock ./lanes
# collab, the command of `collab lock`, starts as fast as what it links:
# on unix it takes SQLite's locks through the kernel, and runs every other
# command through collab-full.
for goos in linux darwin; do
	GOOS=$goos forbid "^(modernc.org/|github.com/jackc/pgx|github.com/anishathalye/porcupine|$mod/(gen|modelcheck|worldmodel|linearizability|lease)(/|$))" ./cmd/collab
done

dir=$(mktemp -d)
trap 'rm -rf "$dir" cmd/.lanesonly cmd/.plockfileonly' EXIT

# small NAME MAIN_GO WHAT LIMIT: builds MAIN_GO as the program cmd/.NAME,
# inside this module as a user's program would be against it, to
# $dir/NAME.bin, and requires it under LIMIT bytes.
small() {
	local name=$1 src=$2 what=$3 limit=$4
	mkdir -p "cmd/.$name" && cp "$src" "cmd/.$name/main.go"
	go build -o "$dir/$name.bin" "./cmd/.$name"
	local size
	size=$(wc -c <"$dir/$name.bin")
	echo "a program that uses only $what: $size bytes"
	if [ "$size" -ge "$limit" ]; then
		echo "it must stay under $limit bytes"
		status=1
	fi
}

cat >"$dir/lanesonly.go" <<'GO'
package main

import (
	"context"

	"github.com/rivus/collab/lanes"
)

func main() {
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		Activate: func(context.Context, string) error { return nil },
	})
	if err != nil {
		panic(err)
	}
	l.Wake("key")
	l.Close()
}
GO
small lanesonly "$dir/lanesonly.go" lanes 3000000

# A program that uses only plock's lock files links no SQLite (one that
# links it is over 10 MB), not plock's SQLite mode or database/sql's code
# (internal/sqlitelock, which platform/sqlite links), no encoding/json
# (platform reads and writes identities itself) and no fmt: platform and
# plock write their messages with strconv (internal/errwrap for %w), as
# fmt is about 280 kB of such a program. It is about 2.94 MB; the same
# program on gofrs/flock is about 2.39 MB with this toolchain. The rest is
# the lock-file code itself: liveness judged from the process table,
# stamps, reclaim, the checks of planted files, and the os file functions
# they need. The program also runs: without platform/sqlite linked, a nil
# platform (the SQLite mode) is an *ArgError, and platform.OS() takes a
# lock file.
cat >"$dir/plockfileonly.go" <<'GO'
package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/plock"
)

func fail(what string, err error) {
	msg := "<nil>"
	if err != nil {
		msg = err.Error()
	}
	os.Stderr.WriteString(what + ": " + msg + "\n")
	os.Exit(1)
}

func main() {
	ctx, path := context.Background(), filepath.Join(os.Args[1], "app.lock")
	var arg *plock.ArgError
	if _, err := plock.Acquire(ctx, nil, path, plock.Options{}); !errors.As(err, &arg) {
		fail("a nil platform without platform/sqlite linked, want a *plock.ArgError", err)
	}
	l, err := plock.Acquire(ctx, platform.OS(), path, plock.Options{})
	if err == nil {
		err = l.Release()
	}
	if err != nil {
		fail("a lock file", err)
	}
}
GO
small plockfileonly "$dir/plockfileonly.go" "plock's lock files" 3000000
if go tool nm "$dir/plockfileonly.bin" | grep ' T fmt\.' >/dev/null; then
	echo "a program that uses only plock's lock files must not link fmt:"
	go build -ldflags=-dumpdep -o /dev/null ./cmd/.plockfileonly 2>&1 | grep -E -- '-> fmt\.[A-Z]' | head -5
	status=1
fi
mkdir "$dir/locks"
if ! "$dir/plockfileonly.bin" "$dir/locks"; then
	echo "the program that uses only plock's lock files failed"
	status=1
fi
exit $status
