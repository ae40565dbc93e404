#!/usr/bin/env bash
# The linters the Ansible ecosystem runs on a collection: ansible-lint's production profile (offline, .ansible-lint)
# and antsibull-docs' check of every plugin's, module's and role's documentation as the docsite renders it
# (option references, choices against types, RETURN), run on the collection where Ansible finds it
# (collections/ansible_collections/ai_storage/checkpoint_io). Exits non-zero when either finds anything.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
rc=0
ansible-lint --profile production || rc=1
(cd collections/ansible_collections/ai_storage/checkpoint_io && antsibull-docs lint-collection-docs --plugin-docs .) \
  || rc=1
exit "$rc"
