#!/usr/bin/env bash
# test.sh runs every test with the race detector (make test), with the
# loopback PostgreSQL servers of scripts/with-pg.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# The default ten minutes per package is too little for the world models
# under the race detector on a slow two-core machine. The contract
# monitors (build tag collabmonitor) are on in every test.
scripts/with-pg.sh go test -race -tags collabmonitor -count=1 -timeout 30m ./...
# The Prometheus adapter is a module of its own, so that collab links no
# client_golang.
cd prometheus && go test -race -count=1 ./...
