#!/usr/bin/env bash
# The main job on the embedded default: boot one lab node (Debian bookworm, one OS and two data NVMe drives),
# run playbooks/tune_checkpoint_nodes.yml against it with lab/demo_vars.yml (the whole order: xfs volume,
# DeepSpeed aio with queue_depth auto, the checkpoint-write verification), print its summary, stop the node.
# LAB_NODES="node1:bookworm node2:trixie" boots a mixed fleet instead.
set -euo pipefail
cd "$(dirname "$0")/.."
lab/bootstrap.sh
state=.lab/demo
nodes=()
for spec in ${LAB_NODES:-node1:bookworm}; do nodes+=("--node=$spec"); done
trap '.venv/bin/python lab/nvmelab.py down --state-dir "$state"' EXIT
.venv/bin/python lab/nvmelab.py up --state-dir "$state" "${nodes[@]}"
.venv/bin/ansible-playbook -i "$state/inventory.yml" playbooks/tune_checkpoint_nodes.yml -e @lab/demo_vars.yml "$@"
