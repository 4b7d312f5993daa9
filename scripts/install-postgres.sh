#!/usr/bin/env bash
# `npm run setup:postgres`: Debian's PostgreSQL for the memory store's tests (test/workflow/memory*.test.ts),
# which start servers of their own from its programs (no service is started here). Needs root and apt.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "PostgreSQL is installed: $(ls -d /usr/lib/postgresql/*/bin | head -1)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install PostgreSQL (its initdb under /usr/lib/postgresql/<version>/bin), then run the tests" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
echo "PostgreSQL installed: $(ls -d /usr/lib/postgresql/*/bin | head -1)"
