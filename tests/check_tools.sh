#!/usr/bin/env bash
# Fails, naming each one, when a tool the lab or the tests run (lab/tools.txt) is not on PATH: lab/bootstrap.sh
# should have installed it. A tool a test uses that is missing from lab/tools.txt is caught by
# tests/unit/test_tools_listed.py.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
missing=0
while read -r tool package; do
  case "$tool" in ''|'#'*) continue ;; esac
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "missing tool: $tool (Debian package $package); lab/bootstrap.sh installs it" >&2
    missing=1
  fi
done < lab/tools.txt
[ "$missing" = 0 ] && echo "every tool of lab/tools.txt is installed"
exit "$missing"
