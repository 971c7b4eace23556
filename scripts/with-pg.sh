#!/usr/bin/env bash
# with-pg.sh runs a command with the loopback PostgreSQL servers the tests
# use. As root, unless COLLAB_TEST_POSTGRES_URL is already set, it starts
# two (installing PostgreSQL if missing), exports their URLs and stops
# them when the command ends: one for lease/postgres, one for the fault
# campaign, which stops its own. Without them the PostgreSQL tests skip,
# or fail under CI=true.
#
#   scripts/with-pg.sh COMMAND [ARG...]
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${COLLAB_TEST_POSTGRES_URL:-}" ] && [ "$(id -u)" = 0 ]; then
	pgdir=/tmp/collab-test-pg
	faultdir=/tmp/collab-test-pg-faults
	trap 'scripts/pg-test-server.sh stop "$pgdir" >/dev/null 2>&1 || true; scripts/pg-test-server.sh stop "$faultdir" >/dev/null 2>&1 || true' EXIT
	trap 'exit 143' TERM # so that the servers stop when the command is killed
	trap 'exit 130' INT
	COLLAB_TEST_POSTGRES_URL=$(scripts/pg-test-server.sh start "$pgdir")
	COLLAB_TEST_PGFAULT_URL=$(scripts/pg-test-server.sh start "$faultdir" 55433)
	export COLLAB_TEST_POSTGRES_URL COLLAB_TEST_PGFAULT_URL COLLAB_TEST_PGFAULT_DIR="$faultdir/pgdata"
fi
# Not exec: the trap must stop the servers after the command.
"$@"
