#!/usr/bin/env bash
# `npm run setup:redis`: Debian's Redis for the live channel's tests (AGENT_LIVE_URL, test/e2e/live-fleet.test.ts),
# which start servers of their own from its program (no service is started here). Needs root and apt.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  echo "Redis is installed: $(redis-server --version | head -1)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install Redis (redis-server on the PATH), then run the tests" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
# The server only: no service is enabled or started by the tests' use of it.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
# Debian's package starts a service on 6379; the tests start their own on free ports.
if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
if command -v service >/dev/null 2>&1; then $SUDO service redis-server stop >/dev/null 2>&1 || true; fi
echo "Redis installed: $(redis-server --version | head -1)"
