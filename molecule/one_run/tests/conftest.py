"""Fixtures of the one_run scenario: the node read in one round trip, the plan the last run wrote."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared"))
from labplay import node_script  # noqa: E402  (the shared helpers of every scenario)

STATE_DIR = "/var/lib/ai_storage_checkpoint_io"
DS_CONFIG = "/etc/deepspeed/ds_config.json"

READ_NODE = node_script(r"""
out = {"namespaces": {}, "md": {}, "records": {}}
for path in sorted(glob.glob("/sys/block/nvme*n*")):
    name = os.path.basename(path)
    if "c" in name[4:]:
        continue  # a native-multipath path device (nvmeXcYnZ), not the namespace
    ctrl = sorted(glob.glob(path + "/device/nvme*") or [path + "/device"])[0]
    out["namespaces"][name] = {
        "serial": (read(path + "/device/serial") or read(ctrl + "/serial") or "").strip(),
        "subsysnqn": (read(path + "/device/subsysnqn") or "").strip(),
        "transport": (read(path + "/device/transport") or read(ctrl + "/transport") or "").strip(),
        "queue": dict((k, (read(path + "/queue/" + k) or "").strip())
                      for k in ("scheduler", "nr_requests", "read_ahead_kb", "max_sectors_kb", "nomerges",
                                "rq_affinity")),
        "holders": sorted(os.listdir(path + "/holders")),
    }
for md in sorted(glob.glob("/sys/block/md*")):
    out["md"][os.path.basename(md)] = sorted(os.path.basename(os.path.realpath(p + "/block"))
                                             for p in glob.glob(md + "/md/dev-*"))
for path in sorted(glob.glob("@STATE@/*.json")):
    out["records"][os.path.basename(path)[:-5]] = read(path)
out["ds_config"] = read("@DS@")
out["mounts"] = read("/proc/mounts")
print(json.dumps(out))
""".replace("@STATE@", STATE_DIR).replace("@DS@", DS_CONFIG))


@pytest.fixture(scope="module")
def node(host):
    """The node after the two runs: its NVMe namespaces (serial, subsystem, transport, queue values, holders), md
    arrays and members, the state store's records (text), the ds_config's text, /proc/mounts."""
    return json.loads(host.check_output(READ_NODE))


@pytest.fixture(scope="module")
def plan(host):
    """The plan the last run wrote on the controller (<report_dir>/plan/<node>.json)."""
    name = host.backend.get_hostname()
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "reports", "plan", name + ".json")) as handle:
        return json.load(handle)
