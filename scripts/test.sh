#!/usr/bin/env bash
# test.sh runs every test with the race detector (make test). As root it
# first starts two loopback PostgreSQL servers (installing PostgreSQL if
# missing) for lease/postgres and for the fault campaign, which stops its
# own; without them those tests skip, or fail under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${COLLAB_TEST_POSTGRES_URL:-}" ] && [ "$(id -u)" = 0 ]; then
	pgdir=/tmp/collab-test-pg
	faultdir=/tmp/collab-test-pg-faults
	trap 'scripts/pg-test-server.sh stop "$pgdir" >/dev/null 2>&1 || true; scripts/pg-test-server.sh stop "$faultdir" >/dev/null 2>&1 || true' EXIT
	COLLAB_TEST_POSTGRES_URL=$(scripts/pg-test-server.sh start "$pgdir")
	COLLAB_TEST_PGFAULT_URL=$(scripts/pg-test-server.sh start "$faultdir" 55433)
	export COLLAB_TEST_POSTGRES_URL COLLAB_TEST_PGFAULT_URL COLLAB_TEST_PGFAULT_DIR="$faultdir/pgdata"
fi

# The default ten minutes per package is too little for the world models
# under the race detector on a slow two-core machine. The contract
# monitors (build tag collabmonitor) are on in every test.
go test -race -tags collabmonitor -count=1 -timeout 30m ./...
