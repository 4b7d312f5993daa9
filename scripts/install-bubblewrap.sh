#!/usr/bin/env bash
# `npm run setup:sandbox`: Debian's bubblewrap, the sandbox workspaces run commands in
# (src/workspace/bubblewrap-sandbox.ts; the tests in test/workflow/workspaces*.test.ts). Needs root
# and apt, and a kernel that lets users make namespaces (checked at the end).
set -euo pipefail
if ! command -v bwrap >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "no apt-get here: install bubblewrap (bwrap) with your system's package manager, then run the tests" >&2
    exit 1
  fi
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq bubblewrap >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq bubblewrap >/dev/null; }
fi
if ! bwrap --unshare-all --ro-bind / / /bin/true 2>/tmp/bwrap-check.$$; then
  echo "bubblewrap is installed but cannot make a sandbox here: $(cat /tmp/bwrap-check.$$)" >&2
  echo "it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, a seccomp profile that allows them)" >&2
  rm -f /tmp/bwrap-check.$$
  exit 1
fi
rm -f /tmp/bwrap-check.$$
echo "bubblewrap is installed: $(bwrap --version)"
