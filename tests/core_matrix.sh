#!/usr/bin/env bash
# The ansible-core minors meta/runtime.yml claims besides the suite's own 2.19: for each line of
# tests/core-matrix.txt (or only the minors named: tests/core_matrix.sh 2.16), in that minor's venv, with
# jinja2_native on (roles/preflight/tasks/templating.yml: 2.16-2.18 need it):
#   ansible-test sanity (tests/sanity.sh; not its style checkers), the unit tier (DeepSpeed's own tests skip: these
#   venvs carry none), and every playbook in check mode on localhost
#   (tests/integration/playbooks/test_check_mode_every_playbook.py, the refusal without jinja2_native included).
# `tests/core_matrix.sh --venv 2.16` only makes that venv and prints its path (lab/demo.sh LAB_DEMO_CORE=2.16).
# The venvs live outside the checkout (~/.cache/checkpoint_io_lab/core-<minor>, made again when their line of
# tests/core-matrix.txt changes): a fresh clone does not install them again. Exits non-zero when any step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
cache="$HOME/.cache/checkpoint_io_lab"

# core_venv MINOR: make (once) the venv of that line of tests/core-matrix.txt; prints its path.
core_venv() {
  local minor=$1 reqs venv
  reqs=$(awk -v m="$minor" '$1 == m { $1 = ""; print substr($0, 2) }' tests/core-matrix.txt)
  [ -n "$reqs" ] || { echo "tests/core_matrix.sh: $minor is not a minor of tests/core-matrix.txt" >&2; return 2; }
  venv="$cache/core-$minor"
  if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$reqs" ]; then
    rm -rf "$venv"
    mkdir -p "$cache"
    python3 -m venv "$venv" >&2 || return 1
    # shellcheck disable=SC2086  # one word per requirement
    "$venv/bin/pip" install -q --disable-pip-version-check $reqs 'pytest>=8.0,<10' 'jmespath>=1.0' >&2 || return 1
    printf '%s\n' "$reqs" > "$venv/.requirements"
  fi
  echo "$venv"
}

if [ "${1:-}" = --venv ]; then
  core_venv "${2:?tests/core_matrix.sh --venv MINOR}"
  exit
fi
minors=("$@")
[ "${#minors[@]}" -gt 0 ] || mapfile -t minors < <(awk '$1 !~ /^#/ && NF { print $1 }' tests/core-matrix.txt)
failed=()
for minor in "${minors[@]}"; do
  start=$SECONDS
  venv=$(core_venv "$minor") || { failed+=("$minor:venv"); continue; }
  version=$("$venv/bin/ansible" --version)
  echo "=== ansible-core $minor: ${version%%$'\n'*}"
  export ANSIBLE_JINJA2_NATIVE=True
  # every sanity test but the style checkers whose verdict does not depend on the ansible-core the collection runs
  # on (their tools' versions do; the suite's own sanity step runs them)
  SANITY_VENV="$venv" tests/sanity.sh --skip-test pep8 --skip-test yamllint --skip-test shellcheck \
    --skip-test pslint || failed+=("$minor:sanity")
  # the DeepSpeed parser and writer tests skip here (these venvs carry no DeepSpeed; the unit step runs them)
  CHECKPOINT_IO_REQUIRE_DEEPSPEED=0 "$venv/bin/python" -m pytest -p no:cacheprovider -q tests/unit \
    || failed+=("$minor:unit")
  "$venv/bin/python" -m pytest -p no:cacheprovider -q tests/integration/playbooks/test_check_mode_every_playbook.py \
    || failed+=("$minor:check-mode")
  unset ANSIBLE_JINJA2_NATIVE
  echo "=== ansible-core $minor: $((SECONDS - start)) s"
done
[ "${#failed[@]}" = 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
echo "ansible-core ${minors[*]}: sanity, unit and the check-mode runs passed"
