#!/usr/bin/env bash
# ansible-test sanity for the collection, without Docker: ansible-test needs the tree at
# .../ansible_collections/ai_storage/checkpoint_io, so the tracked files are copied there first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest="$work/ansible_collections/ai_storage/checkpoint_io"
mkdir -p "$dest"
cd "$root"
git ls-files -z --cached --others --exclude-standard | grep -zv '^collections/' | xargs -0 cp --parents -t "$dest"
cd "$dest"
git init -q . && git add -A >/dev/null  # ansible-test lists files through git
# A venv of its own: --requirements installs the pinned sanity tools (pylint, yamllint, voluptuous...)
# into it, beside nothing else. (--venv mode would download a pip bootstrap from outside PyPI.)
# SANITY_VENV: another venv whose ansible-test runs (tests/core_matrix.sh: each ansible-core minor's own).
venv=${SANITY_VENV:-$root/.cache/sanity-venv}
if [ ! -x "$venv/bin/ansible-test" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'ansible-core>=2.19,<2.20'
fi
# ansible-test bootstraps pip in each per-test venv with a script from a server these machines cannot
# reach; the stand-in installs pip from Python's bundled wheel, then from PyPI.
reqs=$("$venv/bin/python" -c 'import ansible_test, os; print(os.path.dirname(ansible_test.__file__))')/_internal/python_requirements.py
pip_version=$(sed -n "s/.*pip='\([0-9.]*\)'.*/\1/p" "$reqs" | head -n1)
mkdir -p ~/.ansible/test/cache
cp "$root/tests/get_pip_offline.py" ~/.ansible/test/cache/"get_pip_${pip_version//./_}.py"
"$venv/bin/ansible-test" sanity --color no --local --python "$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" --requirements "$@"
