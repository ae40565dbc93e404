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
#   LAB_DEMO_ENGINE=deepspeed: DeepSpeed itself writes and reads back the verification's checkpoints (its
#     FastPersist writer, checkpoint_io_verify_engine deepspeed) on a node of the bookworm-deepspeed image (CPU torch
#     and DeepSpeed in /opt/train-venv, its ops built with the image: about ten minutes the first time).
#   LAB_DEMO_RERUN=1: then the playbook twice more on the same node - nothing changed (it must reuse what it
#     measured: at most 0.3 of the first run's wall time and 1% of its bytes to the data drives), then one more rank
#     (what depends on the ranks is measured again); lab/rerun_check.py checks the three runs.
#   LAB_DEMO_CORE=2.16 (or 2.17, 2.18): the playbook run by that ansible-core minor (its venv of
#     tests/core_matrix.sh, made the first time) with jinja2_native on, instead of the suite's 2.19.
set -euo pipefail
cd "$(dirname "$0")/.."
engine=${LAB_DEMO_ENGINE:-fio}
case "$engine" in
  fio) lab/bootstrap.sh; default_nodes=node1:bookworm; engine_vars=() ;;
  # the image's wheels come from the training environment bootstrap --tests makes
  # DeepSpeed's save goes one request at a time (its file grows): deepspeed_config_writer_block_size auto writes
  # the request size that reaches the drive models' ceiling (docs/deepspeed-fastpersist.md); the default, aio,
  # keeps the aio section's 1 MiB.
  deepspeed) lab/bootstrap.sh --tests; default_nodes=node1:bookworm-deepspeed
             engine_vars=(-e checkpoint_io_verify_engine=deepspeed -e checkpoint_io_deepspeed_python=/opt/train-venv/bin/python
                          -e deepspeed_config_writer_block_size=auto) ;;
  *) echo "LAB_DEMO_ENGINE=$engine: not an engine (fio, deepspeed)" >&2; exit 2 ;;
esac
playbook_bin=.venv/bin/ansible-playbook
if [ -n "${LAB_DEMO_CORE:-}" ]; then
  playbook_bin="$(tests/core_matrix.sh --venv "$LAB_DEMO_CORE")/bin/ansible-playbook"
  export ANSIBLE_JINJA2_NATIVE=True
fi
state=.lab/demo
profile=${LAB_DEMO_PROFILE:-starved}
case "$profile" in
  starved) model=knee16; ranks=1 ;;
  saturated) model=knee2; ranks=2 ;;
  *) echo "LAB_DEMO_PROFILE=$profile: not a profile (starved, saturated)" >&2; exit 2 ;;
esac
model=${LAB_DRIVE_MODEL:-$model}
nodes=()
for spec in ${LAB_NODES:-$default_nodes}; do nodes+=("--node=$spec"); done
models=()
[ "$model" = plain ] || models=("--drive-model=$model")
trap '.venv/bin/python lab/nvmelab.py down --state-dir "$state"' EXIT
.venv/bin/python lab/nvmelab.py up --state-dir "$state" "${nodes[@]}" "${models[@]}"
rm -rf "$state/reports" "$state/runs"
# one run of the playbook, its wall time and its run documents kept in $state/runs/<n>/
run() {
  local n=$1 start end; shift
  start=$(date +%s.%N)
  "$playbook_bin" -i "$state/inventory.yml" playbooks/tune_checkpoint_nodes.yml -e @lab/demo_vars.yml \
    -e "checkpoint_io_ranks=$ranks" ${engine_vars[@]+"${engine_vars[@]}"} "$@"
  end=$(date +%s.%N)
  mkdir -p "$state/runs/$n"
  cp -r "$state/reports/run/." "$state/runs/$n/"
  echo "$start $end" > "$state/runs/$n/wall"
}
run 1 "$@"
check=0
if [ "$model" != plain ]; then
  .venv/bin/python lab/demo_check.py --profile "$profile" --inventory "$state/inventory.yml" \
    --reports "$state/reports/verify" --engine "$engine" || check=$?
fi
# LAB_DEMO_RERUN=1: the playbook again with nothing changed (it must reuse its measurements: at most 0.3 of the
# first run's wall time, 1% of its bytes to the data drives), then with one more rank (what depends on the ranks
# is measured again); lab/rerun_check.py checks the three runs' documents.
if [ -n "${LAB_DEMO_RERUN:-}" ]; then
  run 2 "$@"
  run 3 "$@" -e "checkpoint_io_ranks=$((ranks + 1))"
  .venv/bin/python lab/rerun_check.py "$state/runs" || check=$?
fi
exit "$check"
