#!/usr/bin/env bash
# The Mastra store maker of tests/mastra (real @mastra/* packages, pinned by its package-lock):
# installs Debian's nodejs and npm when node is missing (as root), then `npm ci` there when
# node_modules is older than the lock file; with PostgreSQL at $1 (the storage tests' URL),
# creates the database `mastra_store_test` the Mastra PostgreSQL store tests write into.
# Idempotent. Exits non-zero, with the reason on stderr, when node cannot be had.
set -euo pipefail
cd "$(dirname "$0")/../tests/mastra/store_maker"
say() { echo "mastra.sh: $*" >&2; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        say "node and npm are missing and cannot be installed here (needs root and apt-get)"
        exit 1
    fi
    say "installing Debian's nodejs and npm"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq nodejs npm >&2
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm ci (the pinned Mastra packages)"
    npm ci --no-audit --no-fund --loglevel=error >&2
fi

pg_url="${1:-}"
if [ -n "$pg_url" ] && [ "$(id -u)" = 0 ] && command -v runuser >/dev/null; then
    if ! runuser -u postgres -- psql -qtA -c "SELECT 1 FROM pg_database WHERE datname = 'mastra_store_test'" | grep -q 1; then
        runuser -u postgres -- createdb -O scorelab mastra_store_test >&2
    fi
fi
