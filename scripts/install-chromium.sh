#!/usr/bin/env bash
# `npm run setup:browser`: Debian's Chromium for the browser tests (test/e2e/chat-page.test.ts),
# which drive it with playwright-core (no browser download from the internet). Needs root and apt.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium is installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install Chromium so that /usr/bin/chromium exists, then run the tests" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
echo "chromium installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
