#!/usr/bin/env bash
# The installed way of use: build the collection artifact, install it into an empty collections path, and
# check that ansible resolves its modules and playbook from there (not from the checkout).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ansible-galaxy collection build --output-path "$work" "$root" >/dev/null
ansible-galaxy collection install --offline --no-deps -p "$work/collections" "$work"/ai_storage-checkpoint_io-*.tar.gz
printf '[defaults]\n' > "$work/ansible.cfg"  # not the checkout's: it resolves the checkout itself
export ANSIBLE_COLLECTIONS_PATH="$work/collections" ANSIBLE_CONFIG="$work/ansible.cfg"
test -f "$work/collections/ansible_collections/ai_storage/checkpoint_io/playbooks/tune_checkpoint_nodes.yml"
for path in "$root"/plugins/modules/*.py; do
  module="ai_storage.checkpoint_io.$(basename "$path" .py)"
  ansible-doc -j -t module "$module" | python3 -c '
import json, sys
doc = json.load(sys.stdin)[sys.argv[1]]
assert doc.get("return"), "ansible-doc shows no RETURN for " + sys.argv[1]
assert doc.get("examples"), "ansible-doc shows no EXAMPLES for " + sys.argv[1]
print("%s: %d options, %d return keys" % (sys.argv[1], len(doc["doc"].get("options") or {}), len(doc["return"])))
' "$module"
done
ansible-playbook --syntax-check -i localhost, ai_storage.checkpoint_io.tune_checkpoint_nodes
# nothing of the lab, the test bed or the developer configuration is in the artifact (galaxy.yml build_ignore)
if tar -tzf "$work"/ai_storage-checkpoint_io-*.tar.gz \
    | grep -E '^(\./)?((\.lab|\.venv|collections|lab|molecule|\.config|ee|tests/lab|tests/bench)/|(ansible\.cfg|pytest\.ini|\.ansible-lint|\.yamllint|requirements-dev\.txt)$)'; then
  echo "the artifact carries the lab, the test bed or developer configuration (above)"; exit 1
fi
for artifact in "$work"/ai_storage-checkpoint_io-*.tar.gz; do echo "built and installed: ${artifact##*/}"; done
