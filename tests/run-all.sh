#!/usr/bin/env bash
# Every test of the collection, in order of cost: the tools check, lint, sanity, unit, build/install, the lab's
# drive models, then Molecule on lab nodes (real kernels, emulated NVMe). Exits non-zero when any step fails;
# stops every lab node on exit. Each step prints its seconds; tests/README.md keeps the table of them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bootstrap_start=$SECONDS
lab/bootstrap.sh --tests || exit 1
echo "=== bootstrap: ok ($((SECONDS - bootstrap_start)) s)"
export PATH="$PWD/.venv/bin:$PATH"
# The tests that parse a rendered ds_config with DeepSpeed's own parser fail instead of skipping.
export CHECKPOINT_IO_REQUIRE_DEEPSPEED=1
# This run's labs (and only them: another run on the machine keeps its own) are stopped on exit.
NVMELAB_RUN="run-$$-$(date +%s)"
export NVMELAB_RUN
trap 'python3 lab/nvmelab.py down --all' EXIT
# Lab nodes already running when the suite starts share its two cores and fail no-leftover-qemu at the end: say so
# first, so a slow or failed run shows why.
already=$(ps -eo pid=,args= | awk '($2 ~ /qemu-system-x86_64/ && /-name/) || $2 ~ /nbdkit/' | cut -c1-200)
[ -z "$already" ] || { echo "note: lab processes running before this suite started:"; echo "$already"; }
passed=0
failed=0
failures=()
# tally NAME RC SECONDS: count a step that ended and print its line.
tally() {
  [ -n "${tally_file:-}" ] && echo "$1 $2 $3" >> "$tally_file"
  if [ "$2" = 0 ]; then
    passed=$((passed + 1)); echo "=== $1: ok ($3 s)"
  else
    failed=$((failed + 1)); failures+=("$1"); echo "=== $1: FAILED ($3 s)"
  fi
}
# Each step's output is kept in $step_logs too: a failed step's last lines are printed again at the very end,
# where a CI log that keeps only its tail still shows why.
step_logs=$(mktemp -d)
# Each step reads its own /dev/null: ansible-playbook exits 1 ("requires blocking IO") when its stdin is
# non-blocking, and a flag one process sets on an inherited stdin is every sharer's. Molecule-default's destroy
# failed in two suites on molecule's ansible-playbook --version (exit 1) with the stdin it inherited.
step() {
  local name=$1; shift
  echo "=== $name: $*"
  local start=$SECONDS rc
  { "$@"; rc=$?
    python3 -c 'import os; os.get_blocking(0) or print("note: this step left its stdin non-blocking")'
    exit "$rc"; } < /dev/null 2>&1 | tee "$step_logs/$name.log"
  rc=${PIPESTATUS[0]}
  tally "$name" "$rc" $((SECONDS - start))
}
# A lane: steps run one after another in the background, their output in a file, printed with their
# `=== <step>:` lines when bg_wait collects the lane (the lines of the steps in front stay whole). A lane's
# tallies go to a file (a subshell's counters do not reach this shell); a lane that left none counts as failed.
bg_dir=$(mktemp -d)
bg_lanes=()
bg_lane() {
  local name=$1 func=$2
  echo "=== lane $name: $func (in the background; its output follows when it ends)"
  bg_lanes+=("$name")
  ( tally_file="$bg_dir/$name.tally"; "$func" ) > "$bg_dir/$name.log" 2>&1 &
}
bg_wait() {
  wait
  local name rc step_name
  for name in "${bg_lanes[@]}"; do
    echo "=== lane $name: output"
    cat "$bg_dir/$name.log"
    if [ ! -s "$bg_dir/$name.tally" ]; then
      failed=$((failed + 1)); failures+=("lane-$name"); echo "=== lane $name: FAILED (no step ended)"
      continue
    fi
    while read -r step_name rc _; do
      if [ "$rc" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$step_name"); fi
    done < "$bg_dir/$name.tally"
  done
  bg_lanes=()
}
scenario_step() {
  local scenario=$1
  # molecule/default/tests/test_after_tuning_fleet_report.py keeps the lab fleet's fact cache there
  [ "$scenario" = default ] && rm -rf "$lab_fleet"
  step "molecule-$scenario" molecule test -s "$scenario"
  if [ "$scenario" = default ]; then
    # the lab fleet's page (node1, node2 after the tune run, from the cache that scenario kept) in chromium
    step browser-lab env CHECKPOINT_IO_LAB_FLEET="$PWD/$lab_fleet" \
      python -m pytest -p no:cacheprovider tests/browser -k lab_fleet
  fi
}
lab_fleet=tests/output/lab_fleet
# The host steps (lint, sanity, unit, integration, browser, install), then the lab steps whose assertions do not
# depend on the pace.
host_steps() {
  step lint tests/lint.sh   # ansible-lint (production) and antsibull-docs lint-collection-docs
  step sanity tests/sanity.sh
  # ansible-core 2.16, 2.17, 2.18 (requires_ansible): sanity, unit and every playbook in check mode, each in its venv
  step core-matrix tests/core_matrix.sh
  step unit python -m pytest tests/unit   # pure: no process may start (tests/unit/conftest.py)
  step integration python -m pytest -p no:cacheprovider tests/integration   # real fio, loop devices, ansible-playbook
  step browser python -m pytest -p no:cacheprovider tests/browser   # fleet report in Debian's chromium; screenshots: tests/output/screenshots/
  step install tests/build_install.sh
  step galaxy-importer tests/galaxy_importer.sh   # what Galaxy runs on an upload, ansible-lint on
  # one bookworm node each; what they assert holds under any load (equal fields; the projection uses the bandwidth
  # measured in the same step)
  step lab-nvme-ioctl python -m pytest -p no:cacheprovider -s tests/lab/test_nvme_ioctl.py   # the admin ioctl vs nvme-cli, -s: the times
  step lab-compression python -m pytest -p no:cacheprovider -s tests/lab/test_compression_node.py   # a checkpoint on a lab node, its bandwidth measured there
}
# Two lanes side by side on this machine's 2 cores, each about half of the work (measured seconds in
# tests/README.md), with no wait between them: a step starts when the one before it in its lane ends. Their
# assertions are about behaviour, or compare numbers measured in the same run under the same load.
# The background lane: the host steps, then one run converges (it asserts the state two runs leave, not a pace),
# the NVMe-oF pair, and the three one-role scenarios.
host_lane() {
  host_steps
  for scenario in one_run nvmeof_rdma gds io_uring_engine block_layer; do scenario_step "$scenario"; done
}
faults_step() {
  step lab-faults python -m pytest -p no:cacheprovider -s tests/lab/test_faults.py   # faults injected mid-play, -s: the log
}
# The foreground lane: the fault suite, the whole playbook on the mixed pair, the volume; then one bookworm node:
# Ctrl-C and a killed controller mid-write, fio gone within the heartbeat (a contract, not a pace; beside the fault
# suite it cost the suite 200 s, so it runs after it).
lab_lane() {
  faults_step
  scenario_step default
  scenario_step xfs
  step lab-controller-stops python -m pytest -p no:cacheprovider -s tests/lab/test_controller_stops.py
}

# Alone: the steps whose assertions rest on a time or a bandwidth (the report's time budgets, the drive models'
# knees and ceilings).
alone_steps() {
  step fleet-bench python tests/bench/fleet_report_bench.py   # report time and HTML size, 1,000 and 10,000 nodes
  step lab-drive-models python -m pytest -p no:cacheprovider -s tests/lab/test_drive_models.py   # -s: the curves in the log
}

step tools tests/check_tools.sh
if [ -n "${MOLECULE_SCENARIOS:-}" ]; then
  # one step after another, then only the scenarios named
  host_steps
  alone_steps
  faults_step
  for scenario in $MOLECULE_SCENARIOS; do scenario_step "$scenario"; done
else
  alone_steps
  bg_lane host host_lane
  lab_lane
  bg_wait
  # alone: thermal_validate counts samples per second and asserts the throttled drive's share of the bandwidth
  scenario_step thermal_validate
fi
rm -rf "$bg_dir"
# No lab node may outlive its scenario, passed or failed (zombies are dead already).
no_leftover_qemu() {
  local left
  left=$(ps -eo pid=,stat=,args= | awk '$2 !~ /^Z/ && (($3 ~ /qemu-system-x86_64/ && /-name/) || $3 ~ /nbdkit/)')
  [ -z "$left" ] || { echo "lab nodes or drive-model servers still running:"; echo "$left"; return 1; }
}
step no-leftover-qemu no_leftover_qemu
for name in "${failures[@]}"; do
  [ -s "$step_logs/$name.log" ] || continue
  # what failed, wherever it is in the log (a molecule step ends with recaps that push it out of the tail)
  echo "=== $name: its failed tasks and tests (at most 60 lines)"
  grep -n -A6 -E 'fatal: \[|failed: \[|FAILED!|^E  |FAILED tests/|Error: |Traceback' "$step_logs/$name.log" | head -n 60
  echo "=== $name: its last 40 lines again"
  tail -n 40 "$step_logs/$name.log"
done
rm -rf "$step_logs"
[ "$failed" = 0 ] || echo "failed steps: ${failures[*]}"
echo "steps: $passed passed, $failed failed"
[ "$failed" = 0 ]
