"""Helpers of the thermal_validate scenario: the node's state in one SSH round trip, playbook runs with faults
injected mid-write (../shared/callback_plugins/inject_fault.py), the controller's reports."""
import json
import os
import subprocess
import sys

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = os.path.dirname(os.path.dirname(SCENARIO))
sys.path.insert(0, os.path.join(PROJECT, "collections"))
sys.path.insert(0, os.path.join(PROJECT, "molecule", "shared"))
from labplay import record_data, run_playbook  # noqa: E402  (the shared runner of every scenario)

STATE_DIR = "/var/lib/ai_storage_checkpoint_io"
DS_CONFIG = "/etc/deepspeed/ds_config.json"
CHECKPOINT_DIR = "/mnt/checkpoints/runs"
LAB = os.path.join(PROJECT, "lab", "nvmelab.py")
# The throttle the fault cases inject, in percent of the drive model's 70 MiB/s ceiling (5%: 3.5 MiB/s). Case (c)
# writes with the back-off case (b) recorded in force, so its bandwidth before the throttle is what that per-rank
# depth reaches, not the ceiling. With 30% (21 MiB/s), case (b)'s back-off is depth 3 (the role's README) and case
# (c)'s drives wrote 22 MiB/s before the throttle in the CI of 5048399: it did not bind, and the drop was noise.
# With 5%, case (b)'s back-off is depth 1, which wrote 12 MiB/s per drive here, several times the throttle.
THROTTLE_PERCENT = "5"

READ_NODE = r"""
python3 - <<'PY'
import json, os, subprocess
def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None
ps = subprocess.run(["ps", "-eo", "args"], stdout=subprocess.PIPE, universal_newlines=True).stdout
print(json.dumps({
    "thermal": read(@STATE@ + "/thermal.json"), "series": read(@STATE@ + "/thermal_series.json"),
    "ds_config": read(@DS@), "entries": sorted(os.listdir(@DIR@)) if os.path.isdir(@DIR@) else None,
    "fio": [line for line in ps.splitlines() if line.startswith("fio ")],
}))
PY
""".replace("@STATE@", repr(STATE_DIR)).replace("@DS@", repr(DS_CONFIG)).replace("@DIR@", repr(CHECKPOINT_DIR))


def read_node(host):
    """{thermal: record data or None, series: record data or None, aio: the ds_config's aio section, entries of the
    checkpoint directory, fio processes}."""
    raw = json.loads(host.check_output(READ_NODE))
    return {"thermal": record_data(raw["thermal"], "thermal") if raw["thermal"] else None,
            "series": record_data(raw["series"], "thermal_series") if raw["series"] else None,
            "aio": json.loads(raw["ds_config"])["aio"] if raw["ds_config"] else None,
            "entries": raw["entries"], "fio": raw["fio"]}


def playbook(name, *extra, inject=None, after_s=8, tags=None):
    """(rc, output, recap) of a playbook of the scenario; ``inject``: nvmelab argument lists fired once the
    sustained write has run ``after_s`` seconds; ``tags``: ansible-playbook --tags."""
    env = {}
    if inject:
        env = {"ANSIBLE_CALLBACK_PLUGINS": os.path.join(os.path.dirname(SCENARIO), "shared", "callback_plugins"),
               "ANSIBLE_CALLBACKS_ENABLED": "inject_fault,ansible.posix.profile_tasks",
               "THERMAL_INJECT": json.dumps(inject), "THERMAL_INJECT_AFTER_S": str(after_s),
               "THERMAL_LAB_STATE": os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "lab"),
               "CHECKPOINT_IO_LAB": LAB}
    args = ["--tags", tags] if tags else []
    for item in extra:
        args += ["-e", item]
    rc, output, recap = run_playbook(os.path.join(SCENARIO, name), *args, env=env)
    sys.stdout.write(output[-6000:])
    return rc, output, recap


def lab(*args):
    """One nvmelab command against the scenario's lab (clearing a fault)."""
    argv = [sys.executable, LAB, args[0], "--state-dir",
            os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "lab")] + list(args[1:])
    subprocess.run(argv, check=True, timeout=300)


def report(kind="thermal", node="node1"):
    """The controller's JSON report of the last run (reports/<kind>/<node>.json)."""
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "reports", kind, node + ".json")) as handle:
        return json.load(handle)


def by_serial(doc):
    return dict((drive["serial"], drive) for drive in doc["drives"])
