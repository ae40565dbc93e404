"""Helpers of the nvmeof_rdma scenario: read the initiator in one round trip, run the role, drive the lab."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared"))
from labplay import node_script, record_data, run_playbook  # noqa: E402  (the shared helpers of every scenario)

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROLE_PLAY = os.path.join(SCENARIO, "role.yml")
NQN = "nqn.2026-12.io.checkpoint-io.lab:target-data"
TARGET = "10.77.0.1"
STATE = "/var/lib/ai_storage_checkpoint_io"
UDEV_RULE = "/etc/udev/rules.d/71-checkpoint-io-nvmf-iopolicy.rules"
MTU_DROPIN = "/etc/systemd/network/05-fabric.network.d/60-checkpoint-io-mtu.conf"

READ_NODE = node_script(r"""
out = {"controllers": {}, "subsystems": {}, "files": {}}
for c in sorted(glob.glob("/sys/class/nvme/nvme*")):
    entry = dict((k, (read(c + "/" + k) or "").strip()) for k in
                 ("transport", "address", "sqsize", "queue_count", "subsysnqn", "state", "ctrl_loss_tmo",
                  "reconnect_delay", "kato"))
    out["controllers"][os.path.basename(c)] = entry
for s in sorted(glob.glob("/sys/class/nvme-subsystem/nvme-subsys*")):
    names = os.listdir(s)
    out["subsystems"][(read(s + "/subsysnqn") or "").strip()] = {
        "iopolicy": (read(s + "/iopolicy") or "").strip(),
        "controllers": sorted(n for n in names if n in out["controllers"]),
        "namespaces": sorted(n for n in names if n.startswith("nvme") and n not in out["controllers"])}
for path in ("/etc/nvme/discovery.conf", "/etc/nvme/hostnqn", "/etc/nvme/hostid", "@UDEV@", "@DROPIN@",
             "@STATE@/nvmeof_rdma.json"):
    out["files"][path] = read(path)
out["mtu"] = int(read("/sys/class/net/eth1/mtu"))
out["autoconnect"] = subprocess.run(["systemctl", "is-enabled", "nvmf-autoconnect.service"],
                                    capture_output=True, text=True).stdout.strip()
print(json.dumps(out))
""")


def read_node(host):
    script = READ_NODE.replace("@UDEV@", UDEV_RULE).replace("@DROPIN@", MTU_DROPIN).replace("@STATE@", STATE)
    return json.loads(host.check_output(script))


def fabric(node):
    """The initiator's fabric controllers: {transport: controller entry}."""
    return dict((c["transport"], dict(c, name=name)) for name, c in node["controllers"].items()
                if c["transport"] in ("tcp", "rdma"))


def record(node):
    return record_data(node["files"][STATE + "/nvmeof_rdma.json"], "nvmeof_rdma")


def role(*extra):
    """(rc, output, recap, nvmeof_rdma_result) of the role playbook run from the tests."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "result.json")
        rc, out, recap = run_playbook(ROLE_PLAY, *extra, env={"NVMEOF_RESULT_FILE": path})
        text = open(path).read() if os.path.exists(path) else ""  # copy replaces the file: read it by name
    return rc, out, recap, json.loads(text) if text.strip() else None


def lab(*argv):
    """lab/nvmelab.py with this scenario's state directory; its output."""
    state_dir = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "lab")
    script = os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "lab", "nvmelab.py")
    return subprocess.run([sys.executable, script] + [argv[0], "--state-dir", state_dir] + list(argv[1:]),
                          check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=900).stdout
