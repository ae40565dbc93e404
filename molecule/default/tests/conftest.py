"""Shared fixtures for the testinfra tests: read the lab node's real /sys, /proc and nvme-cli output.

Every SSH round trip to a TCG guest costs about a second, so `node` reads everything the tests compare in
ONE shell command on the node and returns it as JSON; the tests then compare it with the collection's facts.
"""
import json
import os
import sys

import pytest

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(SCENARIO), "shared"))

OS_SERIAL = "OS0001"
DATA_SERIALS = ("DATA0001", "DATA0002")
QUEUE_KEYS = ("scheduler", "nr_requests", "read_ahead_kb", "max_sectors_kb", "max_hw_sectors_kb", "nomerges",
              "rq_affinity")

# Runs on the node (POSIX sh + python3): the raw state, read straight from the kernel and nvme-cli.
READ_NODE = r"""
python3 - <<'PY'
import glob, json, os, subprocess

def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None

def run(*argv):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return proc.stdout

out = {"uname_r": os.uname().release, "mounts": read("/proc/mounts"),
       "io_uring_disabled": read("/proc/sys/kernel/io_uring_disabled"),
       "nvme_io_queue_depth": read("/sys/module/nvme/parameters/io_queue_depth"), "controllers": {}}
for base in sorted(glob.glob("/sys/class/nvme/nvme*")):
    name = os.path.basename(base)
    ctrl = {key: read(os.path.join(base, key))
            for key in ("serial", "model", "firmware_rev", "transport", "address", "queue_count")}
    ctrl["current_link_width"] = read(os.path.join(base, "device/current_link_width"))
    ctrl["hwmon_temp1_input"] = read((glob.glob(base + "/hwmon*/temp1_input") or ["/nonexistent"])[0])
    ctrl["smart_log"] = json.loads(run("nvme", "smart-log", "/dev/" + name, "-o", "json") or "{}")
    ctrl["id_ctrl"] = json.loads(run("nvme", "id-ctrl", "/dev/" + name, "-o", "json") or "{}")
    ctrl["get_feature_7"] = run("nvme", "get-feature", "/dev/" + name, "-f", "7")
    ctrl["namespaces"] = {}
    for nsdir in sorted(glob.glob(base + "/" + name + "n*")):
        ns = os.path.basename(nsdir)
        queue = "/sys/block/%s/queue/" % ns
        ctrl["namespaces"][ns] = {
            "queue": {key: read(queue + key) for key in @KEYS@},
            "size": read("/sys/block/%s/size" % ns),
            "holders": os.listdir("/sys/block/%s/holders" % ns),
            "hw_contexts": len(os.listdir("/sys/block/%s/mq" % ns)),
        }
    out["controllers"][name] = ctrl
print(json.dumps(out))
PY
""".replace("@KEYS@", repr(QUEUE_KEYS))


def active_scheduler(text):
    """'[none] mq-deadline' -> 'none'."""
    return [word.strip("[]") for word in text.split() if word.startswith("[")][0]


@pytest.fixture(scope="module")
def node(host):
    """The node's raw state, read in one round trip."""
    return json.loads(host.check_output(READ_NODE))


@pytest.fixture(scope="module")
def by_serial(node):
    """{serial: (controller name, controller dict)}."""
    return dict((ctrl["serial"], (name, ctrl)) for name, ctrl in node["controllers"].items())


@pytest.fixture(scope="module")
def facts(host):
    """The collection's facts, gathered on the node in check mode (read-only by contract)."""
    result = host.ansible("ai_storage.checkpoint_io.checkpoint_io_facts", "gather_subset=all", check=True)
    assert result.get("changed") is False, result
    return result["ansible_facts"]["checkpoint_io"]
