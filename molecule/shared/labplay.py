"""Run a playbook from a scenario's testinfra tests against Molecule's inventory (shared by every scenario).

The scenarios' conftest.py put this folder on sys.path. ANSI colours off, output returned whole with the
PLAY RECAP parsed into {host: {"ok": n, "changed": n, "failed": n, ...}}.
"""
import json
import os
import re
import shutil
import subprocess
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def record_data(text, name):
    """The data of a record of the collection's state store as the lab node holds it (the file's text), after
    checking its layout: schema 1, its own name, when and by whom it was written."""
    doc = json.loads(text)
    assert doc.get("checkpoint_io_record") == 1 and doc.get("name") == name, doc
    assert doc.get("written_at") and doc.get("writer"), doc
    return doc["data"]


# The start of a script the scenarios run on a lab node (python3 on stdin, as root) to read it in one round trip:
# the usual imports and read(path) -> the file's text or None. node_script() adds the body and closes it.
NODE_PRELUDE = r"""
python3 - <<'PY'
import glob, json, os, subprocess
def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None
"""


def node_script(body):
    """The shell command that runs ``body`` (Python, after NODE_PRELUDE) on a lab node."""
    return NODE_PRELUDE + body.strip("\n") + "\nPY\n"


def ansible_playbook_binary():
    """ansible-playbook of the venv that runs the tests, else the one on PATH."""
    binary = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    if not os.path.exists(binary):
        binary = shutil.which("ansible-playbook")
    assert binary, "ansible-playbook is neither beside %s nor on PATH" % sys.executable
    return binary


def run_playbook(path, *extra, inventory=None, env=None, timeout=1800):
    """(rc, output, recap) of ``ansible-playbook -i <inventory> <path> <extra...>``.

    ``inventory``: default the directory of Molecule's MOLECULE_INVENTORY_FILE (its host and group vars too).
    """
    if inventory is None:
        inventory = os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"])
    argv = [ansible_playbook_binary(), "-i", inventory, path] + list(extra)
    full_env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    full_env.update(env or {})
    # stdin of its own: the playbook cannot leave the test's (Molecule's) stdin non-blocking
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=full_env, cwd=os.path.dirname(os.path.abspath(path)),
                          timeout=timeout, check=False)
    output = ANSI.sub("", proc.stdout)
    recap = {}
    for host, counters in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", output, re.MULTILINE):
        recap[host] = dict((key, int(value)) for key, value in re.findall(r"(\w+)=(\d+)", counters))
    return proc.returncode, output, recap
