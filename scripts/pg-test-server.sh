#!/bin/sh
# pg-test-server.sh starts a throwaway PostgreSQL server for the tests of
# lease/postgres and prints its URL, for COLLAB_TEST_POSTGRES_URL.
#
#   scripts/pg-test-server.sh [start] DIR [PORT]   start (or find running) the server under DIR
#   scripts/pg-test-server.sh stop DIR             stop it
#
# It is idempotent: a server already running in DIR is reused. It installs
# PostgreSQL from the distribution's packages (apt-get) when initdb is
# missing. The server listens on 127.0.0.1 only, with trust authentication,
# and runs as the user postgres (the script must run as root or as postgres).
# PORT defaults to 55432.
set -eu

usage() {
	echo "usage: $0 [start] DIR [PORT] | $0 stop DIR" >&2
	exit 2
}

cmd=start
case "${1:-}" in
start | stop)
	cmd=$1
	shift
	;;
esac
[ $# -ge 1 ] || usage
base=$1
port=${2:-55432}
data=$base/pgdata
sock=$base/pgsock
log=$base/postgres.log

# bindir finds the directory of initdb and pg_ctl, which Debian keeps out of PATH.
bindir() {
	for d in /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ]; then
			echo "$d"
			return 0
		fi
	done
	if command -v initdb >/dev/null 2>&1; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

# as_postgres runs a shell command as the user postgres.
as_postgres() {
	if [ "$(id -un)" = postgres ]; then
		sh -c "$1"
	else
		su postgres -s /bin/sh -c "$1"
	fi
}

install_postgres() {
	echo "initdb not found; installing postgresql with apt-get" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >&2
	apt-get install -y --no-install-recommends postgresql >&2
}

bin=$(bindir || true)
if [ "$cmd" = stop ]; then
	if [ -n "$bin" ] && [ -f "$data/postmaster.pid" ]; then
		as_postgres "'$bin/pg_ctl' -D '$data' -m fast -w stop" >&2
	fi
	exit 0
fi

if [ -z "$bin" ]; then
	install_postgres
	bin=$(bindir) || {
		echo "initdb still not found after installing postgresql" >&2
		exit 1
	}
fi

mkdir -p "$base"
# The postgres user must be able to reach the directory it works in.
chmod a+x "$base"
mkdir -p "$sock"
chown postgres "$sock"
if [ ! -f "$data/PG_VERSION" ]; then
	mkdir -p "$data"
	chown postgres "$data"
	chmod 700 "$data"
	as_postgres "'$bin/initdb' -D '$data' -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null" >&2
fi
if ! as_postgres "'$bin/pg_ctl' -D '$data' status >/dev/null 2>&1"; then
	touch "$log"
	chown postgres "$log"
	as_postgres "'$bin/pg_ctl' -D '$data' -l '$log' -w -o \"-c listen_addresses=127.0.0.1 -p $port -k '$sock'\" start" >&2
fi
# The port of the running server, which may differ from PORT if it was
# started earlier with another one.
port=$(sed -n 4p "$data/postmaster.pid")
if ! as_postgres "'$bin/psql' -h 127.0.0.1 -p $port -U postgres -tAc \"SELECT 1 FROM pg_database WHERE datname = 'collab_test'\"" | grep -q 1; then
	as_postgres "'$bin/createdb' -h 127.0.0.1 -p $port -U postgres collab_test" >&2
fi
echo "postgres://postgres@127.0.0.1:$port/collab_test?sslmode=disable"
