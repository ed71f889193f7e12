#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (never a downloaded browser).
# Idempotent: does nothing when /usr/bin/chromium is already there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "chromium is missing and this is not root: install Debian's chromium package" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
