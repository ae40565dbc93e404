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
trap 'python3 lab/nvmelab.py down --all' EXIT
passed=0
failed=0
failures=()
# tally NAME RC SECONDS: count a step that ended and print its line.
tally() {
  if [ "$2" = 0 ]; then
    passed=$((passed + 1)); echo "=== $1: ok ($3 s)"
  else
    failed=$((failed + 1)); failures+=("$1"); echo "=== $1: FAILED ($3 s)"
  fi
}
step() {
  local name=$1; shift
  echo "=== $name: $*"
  local start=$SECONDS rc=0
  "$@" || rc=$?
  tally "$name" "$rc" $((SECONDS - start))
}
step tools tests/check_tools.sh
step lint ansible-lint --profile production
step sanity tests/sanity.sh
step unit python -m pytest tests/unit
step browser python -m pytest -p no:cacheprovider tests/browser   # fleet report in Debian's chromium; screenshots: tests/output/screenshots/
step fleet-bench python tests/bench/fleet_report_bench.py   # report time and HTML size, 1,000 and 10,000 nodes
step install tests/build_install.sh
step lab-drive-models python -m pytest -p no:cacheprovider -s tests/lab/test_drive_models.py   # -s: the curves in the log
step lab-nvme-ioctl python -m pytest -p no:cacheprovider -s tests/lab/test_nvme_ioctl.py   # the admin ioctl vs nvme-cli, -s: the times
step lab-compression python -m pytest -p no:cacheprovider -s tests/lab/test_compression_node.py   # a checkpoint on a lab node, its bandwidth measured there
step lab-faults python -m pytest -p no:cacheprovider -s tests/lab/test_faults.py   # faults injected mid-play, -s: the log
# A step in the background: its output goes to a file, printed and counted by bg_wait (the steps' lines stay whole).
bg_dir=$(mktemp -d)
bg_names=()
bg_step() {
  local name=$1; shift
  echo "=== $name: $* (in the background; its output follows when it ends)"
  bg_names+=("$name")
  ( start=$SECONDS; "$@" > "$bg_dir/$name.log" 2>&1; echo "$? $((SECONDS - start))" > "$bg_dir/$name.rc" ) &
}
bg_wait() {
  wait
  local name rc secs
  for name in "${bg_names[@]}"; do
    echo "=== $name: output"
    cat "$bg_dir/$name.log"
    rc=1; secs=0
    [ -s "$bg_dir/$name.rc" ] && read -r rc secs < "$bg_dir/$name.rc"
    tally "$name" "$rc" "$secs"
  done
  bg_names=()
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
if [ -n "${MOLECULE_SCENARIOS:-}" ]; then
  for scenario in $MOLECULE_SCENARIOS; do scenario_step "$scenario"; done
else
  scenario_step default
  # xfs (the longest) beside gds, io_uring_engine and block_layer, one after another: none of the four asserts a
  # bandwidth, a latency or a time, and on this machine's 2 cores the pair takes less than the sum of its parts
  # (tests/README.md has the measurement). default, nvmeof_rdma and thermal_validate measure bandwidth, round trips
  # and throttling and run alone.
  bg_step molecule-xfs molecule test -s xfs
  for scenario in gds io_uring_engine block_layer; do scenario_step "$scenario"; done
  bg_wait
  for scenario in nvmeof_rdma thermal_validate; do scenario_step "$scenario"; done
fi
rm -rf "$bg_dir"
# No lab node may outlive its scenario, passed or failed (zombies are dead already).
no_leftover_qemu() {
  local left
  left=$(ps -eo pid=,stat=,args= | awk '$2 !~ /^Z/ && (($3 ~ /qemu-system-x86_64/ && /-name/) || $3 ~ /nbdkit/)')
  [ -z "$left" ] || { echo "lab nodes or drive-model servers still running:"; echo "$left"; return 1; }
}
step no-leftover-qemu no_leftover_qemu
[ "$failed" = 0 ] || echo "failed steps: ${failures[*]}"
echo "steps: $passed passed, $failed failed"
[ "$failed" = 0 ]
