#!/usr/bin/env bash
# Installs what the lab and the tests need on a fresh Debian machine, as root: every tool of lab/tools.txt
# (QEMU, mmdebstrap, an OpenSSH client, fio, nbdkit, ...) from Debian's packages, and the Python tools (pinned
# in requirements-dev.txt) in .venv. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(python3-venv)
while read -r tool package; do
  case "$tool" in ''|'#'*) continue ;; esac
  command -v "$tool" >/dev/null 2>&1 || packages+=("$package")
done < lab/tools.txt
python3 -c 'import ensurepip' 2>/dev/null && [ "${#packages[@]}" = 1 ] && packages=()
# Not a command: the headers and library DeepSpeed's async_io op builds against (fastpersist_write's tests,
# tests/bench/ds_fastpersist.py).
dpkg -s libaio-dev >/dev/null 2>&1 || packages+=(libaio-dev)
if [ "${#packages[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # shellcheck disable=SC2046  # one word per package
  apt-get install -y -q --no-install-recommends $(printf '%s\n' "${packages[@]}" | sort -u)
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
# --tests: Galaxy's importer in a venv of its own (it pins its own ansible-core and ansible-lint).
if [ "${1:-}" = --tests ] && ! cmp -s requirements-importer.txt .venv-importer/.requirements-importer.txt; then
  rm -rf .venv-importer
  python3 -m venv .venv-importer
  .venv-importer/bin/pip install -q --disable-pip-version-check -r requirements-importer.txt
  cp requirements-importer.txt .venv-importer/.requirements-importer.txt
fi
# --tests: a venv per ansible-core minor the collection claims besides 2.19 (tests/core-matrix.txt), outside the
# checkout (~/.cache/checkpoint_io_lab/core-<minor>), for tests/core_matrix.sh.
if [ "${1:-}" = --tests ]; then
  awk '$1 !~ /^#/ && NF { print $1 }' tests/core-matrix.txt | while read -r minor; do
    tests/core_matrix.sh --venv "$minor" >/dev/null || exit 1
  done
fi
# --tests: a training environment at a fixed path, outside the checkout (CPU torch and DeepSpeed, as a GPU node's
# training venv would hold them; fastpersist_write's tests run DeepSpeed with its Python), and DeepSpeed's async_io
# and utils ops built once into the op cache beside it (JIT, natively: minutes the first time). torch keys a built
# op by its sources' paths, so a venv made per clone would build it again in every clean clone; this one is made
# once per machine (and again when requirements-deepspeed.txt changes). A failed build says why here.
if [ "${1:-}" = --tests ]; then
  train="$HOME/.cache/checkpoint_io_lab/train-venv"
  if ! cmp -s requirements-deepspeed.txt "$train/.requirements-deepspeed.txt"; then
    rm -rf "$train"
    python3 -m venv "$train"
    "$train/bin/pip" install -q --disable-pip-version-check "$(grep '^torch==' requirements-deepspeed.txt)"
    "$train/bin/pip" install -q --disable-pip-version-check -r requirements-deepspeed.txt
    cp requirements-deepspeed.txt "$train/.requirements-deepspeed.txt"
  fi
  # the venv's own ninja first, as fastpersist_write runs it: ninja 1.11 (Debian's) and 1.13 (pip's) read each
  # other's build log as unknown and rebuild the whole op
  if ! ops=$(PATH="$train/bin:$PATH" TORCH_EXTENSIONS_DIR="$HOME/.cache/checkpoint_io_lab/torch_extensions" \
      "$train/bin/python" -c '
import sys
sys.path.insert(0, "collections")
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import fastpersist
print("DeepSpeed ops loaded (seconds): %s" % fastpersist.load_ops()[1])' 2>&1); then
    printf '%s\n' "$ops" | tail -n 20
    echo "lab/bootstrap.sh: DeepSpeed's async_io op does not build or load (above)" >&2
    exit 1
  fi
  printf '%s\n' "$ops" | tail -n 1
fi
