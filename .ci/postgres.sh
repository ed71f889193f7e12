#!/usr/bin/env bash
# A PostgreSQL server on 127.0.0.1 for the storage tests: installs Debian's postgresql if it is
# missing, starts a cluster, creates the role and database, and prints the URL on stdout (and
# nothing else there). Idempotent; fast when the server already runs. Exits non-zero, with the
# reason on stderr, when no server can be had.
set -euo pipefail

PORT="${SCORELAB_PG_PORT:-5432}"
ROLE=scorelab
# Not a word that messages hold: scorelab masks the passwords of URLs in its environment
# wherever text leaves it, so a password spelt like the program's name would hide its name.
PASSWORD=pg-test-4b1f9e
DATABASE=scorelab_test
URL="postgresql://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DATABASE"

say() { echo "postgres.sh: $*" >&2; }

if [ -n "${SCORELAB_TEST_POSTGRES_URL:-}" ]; then
    echo "$SCORELAB_TEST_POSTGRES_URL"
    exit 0
fi

latest_version() { ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1; }

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -n -u postgres "$@"; fi
}

if [ -z "$(latest_version)" ]; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        say "PostgreSQL is not installed and cannot be installed here (needs root and apt-get)"
        exit 1
    fi
    say "installing Debian's postgresql package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
fi
VERSION="$(latest_version)"
BIN="/usr/lib/postgresql/$VERSION/bin"

if ! "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT"; then
    if ! pg_lsclusters -h 2>/dev/null | awk -v p="$PORT" '$3 == p {found=1} END {exit !found}'; then
        say "creating cluster $VERSION/scorelab on port $PORT"
        pg_createcluster --port "$PORT" "$VERSION" scorelab >&2
    fi
    CLUSTER="$(pg_lsclusters -h | awk -v p="$PORT" '$3 == p {print $1 " " $2; exit}')"
    say "starting cluster $CLUSTER"
    # shellcheck disable=SC2086
    pg_ctlcluster $CLUSTER start >&2 || true
    for _ in $(seq 1 60); do
        "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" && break
        sleep 0.5
    done
    if ! "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT"; then
        say "the server on 127.0.0.1:$PORT did not come up"
        exit 1
    fi
fi

psql_admin() { as_postgres "$BIN/psql" -p "$PORT" -v ON_ERROR_STOP=1 -qtA "$@"; }

if [ "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != 1 ]; then
    psql_admin -c "CREATE ROLE $ROLE LOGIN PASSWORD '$PASSWORD'" >&2
else
    psql_admin -c "ALTER ROLE $ROLE LOGIN PASSWORD '$PASSWORD'" >&2
fi
if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" != 1 ]; then
    psql_admin -c "CREATE DATABASE $DATABASE OWNER $ROLE" >&2
fi
echo "$URL"
