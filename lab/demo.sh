#!/usr/bin/env bash
# The main job on the embedded default: boot one lab node (Debian bookworm, one OS and two data NVMe drives behind
# drive models), run playbooks/tune_checkpoint_nodes.yml against it (the whole order: the baseline before any
# role, io_uring, block layer, xfs volume, DeepSpeed aio with queue_depth auto, the checkpoint-write
# verification), print its summary, check what it reports against the drive model, stop the node.
#   LAB_DEMO_PROFILE=starved (default): drives with a knee at depth 16 each (knee16: 160 ms per 1 MiB request,
#     60 MiB/s), one rank: DeepSpeed's default queue_depth 8 leaves the array (knee 2 x 9.6 MiB in flight) starved,
#     as on real multi-drive arrays; the tuning must find the depth (>= 1.5 x before, >= 0.9 x the ceiling).
#   LAB_DEMO_PROFILE=saturated: drives with a knee at depth 2 (knee2), two ranks: the default depth already
#     saturates them; the tuning must not claim a gain (after/before within the spread of 1.0) and lowers p99.
#   LAB_DRIVE_MODEL=PROFILE|latency=MS,ceiling=SIZE|plain picks another drive model for the profile's shape
#     (plain: file-backed drives, bounded by the emulating CPU; the check is then skipped).
#   LAB_NODES="node1:bookworm node2:trixie" boots a mixed fleet instead.
set -euo pipefail
cd "$(dirname "$0")/.."
lab/bootstrap.sh
state=.lab/demo
profile=${LAB_DEMO_PROFILE:-starved}
case "$profile" in
  starved) model=knee16; ranks=1 ;;
  saturated) model=knee2; ranks=2 ;;
  *) echo "LAB_DEMO_PROFILE=$profile: not a profile (starved, saturated)" >&2; exit 2 ;;
esac
model=${LAB_DRIVE_MODEL:-$model}
nodes=()
for spec in ${LAB_NODES:-node1:bookworm}; do nodes+=("--node=$spec"); done
models=()
[ "$model" = plain ] || models=("--drive-model=$model")
trap '.venv/bin/python lab/nvmelab.py down --state-dir "$state"' EXIT
.venv/bin/python lab/nvmelab.py up --state-dir "$state" "${nodes[@]}" "${models[@]}"
rm -rf "$state/reports"
.venv/bin/ansible-playbook -i "$state/inventory.yml" playbooks/tune_checkpoint_nodes.yml -e @lab/demo_vars.yml \
  -e "checkpoint_io_ranks=$ranks" "$@"
if [ "$model" != plain ]; then
  .venv/bin/python lab/demo_check.py --profile "$profile" --inventory "$state/inventory.yml" \
    --reports "$state/reports/verify"
fi
