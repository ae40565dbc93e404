#!/usr/bin/env bash
# GPUDirect Storage checks for a machine with an NVIDIA GPU (the device machine of the project, an H200 with
# NVIDIA's driver), run from the repository root: bash tests/device/gds_check.sh
# A few minutes at most. It gathers the collection's gds facts, runs the gds role's plan (and the role itself in
# check mode where ansible-playbook is there: carry .venv), and tries to prove the cuFile path with a write from GPU
# memory (gdsio, else libcufile through ctypes: the nvidia-cufile wheel carries it), reading the nvidia-fs counters
# before and after. It changes nothing outside a temporary directory and says at the end what it proved and what it
# could not.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
export PYTHONPATH="$PWD/collections${PYTHONPATH:+:$PYTHONPATH}"
py=python3
[ -x .venv/bin/python ] && py="$PWD/.venv/bin/python"
echo "== machine"
uname -srm
nvidia-smi -L 2>&1 | head -8 || echo "nvidia-smi: not found"
head -2 /proc/driver/nvidia/version 2>/dev/null || echo "/proc/driver/nvidia/version: absent"
echo "== facts, plan and proof (tests/device/gds_check.py)"
timeout 300 "$py" tests/device/gds_check.py "${GDS_CHECK_DIR:-}"
rc=$?
if command -v ansible-playbook >/dev/null 2>&1 || [ -x .venv/bin/ansible-playbook ]; then
  echo "== the gds role in check mode on this machine"
  ap=ansible-playbook
  [ -x .venv/bin/ansible-playbook ] && ap=.venv/bin/ansible-playbook
  state=$(mktemp -d)  # root-only, the role's records would go there (check mode writes none)
  ANSIBLE_COLLECTIONS_PATH="$PWD/collections" timeout 300 "$ap" -i localhost, -c local --check --diff \
    -e ansible_python_interpreter="$(command -v "$py" || echo /usr/bin/python3)" -e checkpoint_io_state_dir="$state" \
    tests/device/gds_role_check.yml 2>&1 | grep -E '^(TASK|ok|changed|fatal|failed|skipping|PLAY RECAP|localhost|    msg)' | tail -40
  rm -rf "$state"
else
  echo "== the gds role in check mode: NOT RUN (no ansible-playbook here; carry .venv to run it)"
fi
exit $rc
