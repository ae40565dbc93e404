"""Helpers of the gds scenario: read the lab node in one round trip, run the role playbook, parse cufile.json."""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared"))
from labplay import node_script, record_data, run_playbook  # noqa: E402  (the shared helpers of every scenario)

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROLE_PLAY = os.path.join(SCENARIO, "role.yml")
CUFILE = "/etc/cufile.json"
LOCAL = "/home/trainer/job/local_cufile.json"
STATE = "/var/lib/ai_storage_checkpoint_io"
MODPROBE = "/etc/modprobe.d/90-ai-storage-checkpoint-io-nvidia-fs.conf"
MODULES_LOAD = "/etc/modules-load.d/90-ai-storage-checkpoint-io-nvidia-fs.conf"
# molecule.yml: 8 ranks x depth 160 x 32 MiB
BLOCK_KIB, RANKS, DEPTH = 32768, 8, 160

READ_NODE = node_script(r"""
out = {"files": {}, "modes": {}}
for path in ["@CUFILE@", "@LOCAL@", "@STATE@/gds.json", "@STATE@/cufile_config.json", "@MODPROBE@",
             "@MODULES_LOAD@"]:
    out["files"][path] = read(path)
    out["modes"][path] = oct(os.stat(path).st_mode & 0o7777) if os.path.exists(path) else None
out["backups"] = sorted(glob.glob("@CUFILE@.*~"))
out["nvidia_fs_loaded"] = os.path.isdir("/sys/module/nvidia_fs")
out["nvidia_gpus"] = os.path.isdir("/proc/driver/nvidia/gpus")
print(json.dumps(out))
""")


def read_node(host):
    script = READ_NODE
    for name, value in (("@CUFILE@", CUFILE), ("@LOCAL@", LOCAL), ("@STATE@", STATE), ("@MODPROBE@", MODPROBE),
                        ("@MODULES_LOAD@", MODULES_LOAD)):
        script = script.replace(name, value)
    return json.loads(host.check_output(script))


def record(node, name):
    """The data of the state store's record ``name`` as read_node found it on the node."""
    return record_data(node["files"]["%s/%s.json" % (STATE, name)], name)


def strip_comments(text):
    """JSON text of a cufile.json written by these tests or the role (no '//' inside strings)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(re.sub(r"(^|\s)//.*$", "", line) for line in text.splitlines())


def flat(text):
    out = {}

    def walk(obj, prefix):
        for key, value in obj.items():
            if isinstance(value, dict) and value:
                walk(value, prefix + key + ".")
            else:
                out[prefix + key] = value
    walk(json.loads(strip_comments(text)), "")
    return out


def role(*extra):
    """(rc, output, recap, gds_result or None) of role.yml with -e extras."""
    argv = []
    for item in extra:
        argv.extend(["--check", "--diff"] if item == "--check" else ["-e", item])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gds_result.json")
        rc, out, recap = run_playbook(ROLE_PLAY, *argv, env={"GDS_RESULT_FILE": path})
        result = None
        if os.path.exists(path):
            with open(path) as handle:
                result = json.load(handle)
    return rc, out, recap, result


def put(host, path, text, owner="root"):
    """Write a file on the node as root (base64: no quoting trouble)."""
    import base64
    data = base64.b64encode(text.encode()).decode()
    host.check_output("echo %s | base64 -d > %s && chown %s: %s && chmod 0644 %s" % (data, path, owner, path, path))
