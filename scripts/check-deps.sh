#!/usr/bin/env bash
# check-deps.sh holds the packages to what they may link (make verify):
# the runtime links no generator, model checker or reference interpreter;
# lanes links no SQLite either, and a program that uses only lanes stays
# under 3 MB; fsm imports policy alone; platform and lease link no driver.
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
forbid "^modernc.org/sqlite" ./lanes ./lease ./platform ./fsm ./policy
forbid "^$mod/(platform|lanes|lease|plock|gen)" ./fsm ./policy

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/lanesonly"
cat >"$dir/lanesonly/main.go" <<'GO'
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
# Built inside this module, as a user's program would be against it.
mkdir -p cmd/.lanesonly && cp "$dir/lanesonly/main.go" cmd/.lanesonly/ && trap 'rm -rf "$dir" cmd/.lanesonly' EXIT
go build -o "$dir/lanesonly.bin" ./cmd/.lanesonly
size=$(wc -c <"$dir/lanesonly.bin")
echo "a program that uses only lanes: $size bytes"
if [ "$size" -ge 3000000 ]; then
	echo "it must stay under 3 MB"
	status=1
fi
exit $status
