"""checkpoint_compression on a lab node: a real checkpoint (made here with torch, tests/unit/checkpoints.py) copied to
the node, the node's write bandwidth measured there (fio io_uring, 1 MiB O_DIRECT sequential writes on a data drive,
the lab's scratch disk), and the module run there with ansible (ad hoc, as root) on the copy with that bandwidth:
its projection must use it (write bound = bandwidth x ratio, the smaller bound named), the node's cores counted,
the copy left byte for byte as it was.

One bookworm node. Not run by the unit suite (it boots QEMU): `python -m pytest tests/lab/test_compression_node.py`.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB = [sys.executable, os.path.join(ROOT, "lab", "nvmelab.py")]
sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))
from checkpoints import make_checkpoints  # noqa: E402

REMOTE = "/root/ckpt"
FIO_SIZE = "256M"
# The first data drive (serial DATA0001): the lab's scratch disk, written raw.
MEASURE = r"""
set -e
dev=
for c in /sys/class/nvme/nvme*; do
  if [ "$(cat $c/serial | tr -d ' ')" = DATA0001 ]; then dev=/dev/$(ls $c | grep -m1 '^nvme[0-9]*n[0-9]*$'); fi
done
test -n "$dev"
fio --name=bw --filename=$dev --rw=write --bs=1M --iodepth=8 --ioengine=io_uring --direct=1 --size=%s \
    --output-format=json
""" % FIO_SIZE


def lab(*args, check=True, **kwargs):
    return subprocess.run(LAB + list(args), check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=900, **kwargs)


def ansible(inventory, module, args):
    """(rc, JSON result) of one ad-hoc module run on node1 (the checkout's ansible.cfg: the collection resolves)."""
    binary = os.path.join(os.path.dirname(sys.executable), "ansible")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="json")
    proc = subprocess.run([binary, "node1", "-i", inventory, "-m", module, "-a", json.dumps(args)], cwd=ROOT,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=900, check=False)
    doc = json.loads(proc.stdout[proc.stdout.index("{"):])
    return proc.returncode, doc["plays"][0]["tasks"][0]["hosts"]["node1"]


def _remote_sha(node, path):
    out = lab("ssh", "--state-dir", node["state"], "node1", "--", "sha256sum %s" % path).stdout
    return re.search(r"\b[0-9a-f]{64}\b", out).group(0)


def _sha(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


@pytest.fixture(scope="module")
def node():
    with tempfile.TemporaryDirectory(prefix="compression-node-") as tmp:
        ckpts = make_checkpoints(os.path.join(tmp, "ckpt"), hidden=512)
        state = os.path.join(tmp, "lab")
        up = lab("up", "--state-dir", state, "--node", "node1:bookworm", check=False)
        try:
            assert up.returncode == 0, up.stdout
            inventory = os.path.join(state, "inventory.yml")
            wanted = (ckpts[4]["torch"], ckpts[3]["torch"], ckpts[4]["weights"])
            files = [os.path.relpath(f, tmp + "/ckpt") for f in wanted]
            copy = subprocess.run(["tar", "-C", tmp + "/ckpt", "-cf", "-"] + files, check=True,
                                  stdout=subprocess.PIPE).stdout
            put = subprocess.run(LAB + ["ssh", "--state-dir", state, "node1", "--",
                                        "mkdir -p %s && tar -C %s -xf -" % (REMOTE, REMOTE)], input=copy,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300, check=False)
            assert put.returncode == 0, put.stdout
            fio = lab("ssh", "--state-dir", state, "node1", "--", MEASURE)
            job = json.loads(fio.stdout[fio.stdout.index("{"):])["jobs"][0]
            bandwidth = round(job["write"]["bw_bytes"] / 2 ** 20, 1)
            yield {"inventory": inventory, "state": state, "bandwidth": bandwidth, "local": ckpts,
                   "remote": dict((step, dict((k, os.path.join(REMOTE, os.path.relpath(v, tmp + "/ckpt")))
                                              for k, v in e.items() if k in ("torch", "weights")))
                                  for step, e in ckpts.items())}
        finally:
            lab("down", "--state-dir", state, check=False)


def test_projection_uses_the_nodes_measured_write_bandwidth(node):
    assert node["bandwidth"] > 0
    before = _remote_sha(node, node["remote"][4]["torch"])
    rc, out = ansible(node["inventory"], "ai_storage.checkpoint_io.checkpoint_compression",
                      {"paths": [node["remote"][4]["torch"]], "previous": [node["remote"][3]["torch"]],
                       "roots": [REMOTE], "write_bandwidth": node["bandwidth"], "codecs": ["zlib", "huffman"],
                       "time_budget": 600})
    assert rc == 0 and not out.get("failed"), out
    print("node1: fio %s MiB/s; projection %s" % (node["bandwidth"], json.dumps(out["projection"])))
    projection = out["projection"]
    assert projection["write_mib_s"] == node["bandwidth"]
    assert projection["write_bound_mib_s"] == pytest.approx(node["bandwidth"] * projection["ratio"], abs=0.1)
    assert projection["compress_bound_mib_s"] == pytest.approx(projection["per_core_mib_s"] * out["cores"]["used"],
                                                               abs=0.2)
    assert projection["effective_mib_s"] == min(projection["write_bound_mib_s"], projection["compress_bound_mib_s"])
    assert projection["bound"] in ("write", "compress")
    assert set(out["classes"]) == {"bf16", "fp32"} and out["delta"]["matched_tensors"] > 0
    assert out["changed"] is False
    assert before == _remote_sha(node, node["remote"][4]["torch"]) == _sha(node["local"][4]["torch"])
