#!/usr/bin/env bash
# Installs what the lab and the tests need on a fresh Debian machine, as root: QEMU, mmdebstrap and an
# OpenSSH client from Debian's packages, and the Python tools (pinned in requirements-dev.txt) in .venv.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
for tool in qemu-system-x86_64 qemu-img mmdebstrap mkfs.ext4 ssh ssh-keygen git; do
  command -v "$tool" >/dev/null 2>&1 || missing=1
done
if [ "$missing" = 1 ] || [ "${CI:-}" = true ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends \
    qemu-system-x86 qemu-utils mmdebstrap e2fsprogs openssh-client ca-certificates git python3-venv shellcheck
fi
stamp=.venv/.requirements-dev.txt
if [ ! -x .venv/bin/molecule ] || ! cmp -s requirements-dev.txt "$stamp"; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
  cp requirements-dev.txt "$stamp"
fi
# --tests: also DeepSpeed's own aio parser for the tests (CPU only, about 1 minute): torch first, then deepspeed.
ds_stamp=.venv/.requirements-deepspeed.txt
if [ "${1:-}" = --tests ] && ! cmp -s requirements-deepspeed.txt "$ds_stamp"; then
  .venv/bin/pip install -q --disable-pip-version-check "$(grep '^torch==' requirements-deepspeed.txt)"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-deepspeed.txt
  cp requirements-deepspeed.txt "$ds_stamp"
fi
