#!/usr/bin/env bash
# What Galaxy and Automation Hub run on an upload: galaxy-importer (.venv-importer, lab/bootstrap.sh --tests) on the
# built artifact, ansible-lint on, ansible-test off (tests/sanity.sh runs it). Fails on a non-zero exit and on any
# warning or error it prints (a playbook its lint cannot load, a plugin ansible-doc cannot read).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-importer"
[ -x "$venv/bin/python" ] || { echo "no $venv: lab/bootstrap.sh --tests makes it"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$root/.venv/bin/ansible-galaxy" collection build --output-path "$work" "$root" >/dev/null || exit 1
printf '[galaxy-importer]\nRUN_ANSIBLE_LINT = True\nRUN_ANSIBLE_TEST = False\nRUN_FLAKE8 = False\n' > importer.cfg
PATH="$venv/bin:$PATH" GALAXY_IMPORTER_CONFIG="$work/importer.cfg" \
  "$venv/bin/python" -m galaxy_importer.main "$work"/ai_storage-checkpoint_io-*.tar.gz > importer.log 2>&1
rc=$?
cat importer.log
if [ "$rc" != 0 ] || grep -Eiq '^(WARNING|ERROR)|warning:|failed to load' importer.log; then
  echo "galaxy-importer: rc $rc, or a warning or error above"; exit 1
fi
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("galaxy-importer: imported, requires_ansible %s, %d contents" % (r["requires_ansible"], len(r["contents"])))' importer_result.json
