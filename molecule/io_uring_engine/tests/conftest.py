"""Shared fixtures of the io_uring_engine scenario: read the lab node in ONE round trip, run playbooks.

Every SSH round trip to a TCG guest costs about a second, so `read_node` gathers everything the tests compare
(/proc/sys, /sys, the role's files, PAM limits as the users really get them, io_uring as the users really get
it) in one shell command and returns it as JSON.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared"))
from labplay import run_playbook  # noqa: E402  (the shared runner of every scenario)

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAINING_USER = "trainer"
OUTSIDER = "outsider"
GROUP = "iouring"
# io_uring_engine_memlock: auto in molecule.yml: 2 x (8 ranks x queue depth 8 x 1 MiB + 2 drives x depth 16 x 1 MiB)
# + 64 MiB = 256 MiB (module_utils/io_uring/engine_access.py memlock_need)
MEMLOCK_KIB = "262144"
SECOND_GROUP = "iouring2"
SHARED_GROUP = "iouring-shared"
TARGET_DEPTH = 16
DATA_SERIALS = ("DATA0001", "DATA0002")
SYSCTL_FILE = "/etc/sysctl.d/90-ai-storage-checkpoint-io-io-uring.conf"
LIMITS_FILE = "/etc/security/limits.d/90-ai-storage-checkpoint-io-io-uring.conf"
PROFILE_FILE = "/etc/ai_storage_checkpoint_io/engine_profile.json"
RECORD_FILE = "/var/lib/ai_storage_checkpoint_io/io_uring_engine.json"
FILES = (SYSCTL_FILE, LIMITS_FILE, PROFILE_FILE, RECORD_FILE)

# Runs on the node (POSIX sh + python3) as root.
READ_NODE = r"""
python3 - <<'PY'
import glob, grp, json, os, subprocess

def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None

def run(argv, timeout=120):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=timeout)
    return {"rc": proc.returncode, "out": proc.stdout}

def fio_as(user):
    # A tiny buffered io_uring job in the user's home: proves io_uring_setup() as that user, under the kernel's
    # io_uring_disabled / io_uring_group and the user's PAM session limits. Summarized here: fio's JSON is large.
    res = run(["su", "-", user, "-c", "fio --name=probe --ioengine=io_uring --filename=$HOME/io_uring_probe "
               "--size=1M --bs=64k --rw=write --unlink=1 --output-format=json"])
    start = res["out"].find("{")
    summary = {"rc": res["rc"], "messages": res["out"][:start] if start >= 0 else res["out"][:2000],
               "job_error": None, "io_bytes": None}
    try:
        job = json.loads(res["out"][start:])["jobs"][0]
        summary.update(job_error=job["error"], io_bytes=job["write"]["io_bytes"])
    except (ValueError, KeyError, IndexError):
        pass
    return summary

out = {"io_uring_disabled": read("/proc/sys/kernel/io_uring_disabled"),
       "io_uring_group": read("/proc/sys/kernel/io_uring_group"),
       "files": {}, "modes": {}, "controllers": {}}
try:
    entry = grp.getgrnam("@GROUP@")
    out["group"] = {"gid": entry.gr_gid, "members": list(entry.gr_mem)}
except KeyError:
    out["group"] = None
try:
    entry = grp.getgrnam("@SECOND@")
    out["second_group"] = {"gid": entry.gr_gid, "members": list(entry.gr_mem)}
except KeyError:
    out["second_group"] = None
for path in @FILES@:
    out["files"][path] = read(path)
    out["modes"][path] = oct(os.stat(path).st_mode & 0o7777) if os.path.exists(path) else None
out["profile_dir_exists"] = os.path.isdir(os.path.dirname("@PROFILE@"))
for user in ("@USER@", "@OUTSIDER@"):
    out[user] = {"ulimit_l": run(["su", "-", user, "-c", "ulimit -l"]),
                 "groups": run(["id", "-nG", user])["out"].split(),
                 "fio": fio_as(user)}
for base in sorted(glob.glob("/sys/class/nvme/nvme*")):
    name = os.path.basename(base)
    out["controllers"][name] = {
        "serial": (read(base + "/serial") or "").strip(),
        "local_cpulist": (read(base + "/device/local_cpulist") or "").strip(),
        "numa_node": (read(base + "/device/numa_node") or "").strip(),
        "namespaces": [os.path.basename(p) for p in sorted(glob.glob(base + "/" + name + "n*"))],
    }
print(json.dumps(out))
PY
""".replace("@FILES@", repr(FILES)).replace("@GROUP@", GROUP).replace("@SECOND@", SECOND_GROUP) \
   .replace("@PROFILE@", PROFILE_FILE) \
   .replace("@USER@", TRAINING_USER).replace("@OUTSIDER@", OUTSIDER)


def read_node(host):
    """The node's state, read in one round trip."""
    return json.loads(host.check_output(READ_NODE))


def expand_cpulist(text):
    cpus = set()
    for chunk in text.split(","):
        if "-" in chunk:
            low, high = chunk.split("-")
            cpus.update(range(int(low), int(high) + 1))
        elif chunk:
            cpus.add(int(chunk))
    return sorted(cpus)


def ansible_playbook(playbook, *extra):
    """Run a playbook of this scenario against Molecule's inventory; (rc, output, {host: recap counters})."""
    return run_playbook(os.path.join(SCENARIO, playbook), *extra)


@pytest.fixture(scope="module")
def node(host):
    return read_node(host)
