"""Helpers of the xfs scenario: the node's real state in ONE ssh round trip, and ansible-playbook runs.

Every SSH round trip to a TCG guest costs about a second, so `read_node` gathers everything the tests compare
(/proc/mdstat, xfs_info, /proc/mounts, fstab, mdadm.conf, the record, wipefs, ownership) in one shell command
and returns it as JSON. The raw outputs are parsed with the collection's own parsers (module_utils/xfs/xfs.py).
"""
import json
import os
import subprocess
import sys

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = os.path.dirname(os.path.dirname(SCENARIO))
sys.path.insert(0, os.path.join(PROJECT, "collections"))
sys.path.insert(0, os.path.join(PROJECT, "molecule", "shared"))
from labplay import ANSI, ansible_playbook_binary, run_playbook  # noqa: E402  (the shared runner of every scenario)

DATA_SERIALS = ("DATA0001", "DATA0002")
MOUNT_POINT = "/mnt/checkpoints"
CHECKPOINT_DIR = "/mnt/checkpoints/runs"
RECORD = "/var/lib/ai_storage_checkpoint_io/xfs.json"

READ_NODE = r"""
python3 - <<'PY'
import glob, grp, json, os, pwd, subprocess

def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None

def run(*argv):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}

drives = {}
for base in sorted(glob.glob("/sys/class/nvme/nvme*")):
    serial = (read(base + "/serial") or "").strip()
    for ns in sorted(glob.glob(base + "/" + os.path.basename(base) + "n*")):
        name = os.path.basename(ns)
        drives[serial] = {"name": name, "queue_count": int(read(base + "/queue_count")),
                          "size": int(read("/sys/block/%s/size" % name)) * 512,
                          "holders": sorted(os.listdir("/sys/block/%s/holders" % name))}
# the array holding the first data drive, whatever name the boot gave it (/dev/md/ckpt, /dev/md/<host>:ckpt)
holders = [h for d in drives.values() for h in d["holders"] if h.startswith("md")]
md_kernel = holders[0] if holders else None
md_dev = "/dev/" + md_kernel if md_kernel else None
out = {
    "boot_id": (read("/proc/sys/kernel/random/boot_id") or "").strip(),
    "boot_id_before_reboot": (read("/var/tmp/xfs-molecule-boot-id") or "").strip() or None,
    "drives": drives, "md_kernel": md_kernel,
    "md_size": int(read("/sys/block/%s/size" % md_kernel)) * 512 if md_kernel else None,
    "mdstat": read("/proc/mdstat"), "mounts": read("/proc/mounts"), "fstab": read("/etc/fstab"),
    "mdadm_conf": read("/etc/mdadm/mdadm.conf"), "record": read(@RECORD@),
    "xfs_info": run("xfs_info", @MOUNT@) if os.path.ismount(@MOUNT@) else None,
    "mdadm_detail": run("mdadm", "--detail", "--export", md_dev) if md_kernel else None,
    "blkid": run("blkid", "-p", "-o", "export", md_dev) if md_kernel else None,
    "md_links": sorted(os.listdir("/dev/md")) if os.path.isdir("/dev/md") else [],
    "wipefs": run("wipefs", "--no-act", "--json", "--output", "DEVICE,OFFSET,TYPE,UUID,LABEL,USAGE",
                  *["/dev/" + d["name"] for d in drives.values()]),
    "dir": None,
}
if os.path.isdir(@DIR@):
    st = os.stat(@DIR@)
    out["dir"] = {"owner": pwd.getpwuid(st.st_uid).pw_name, "group": grp.getgrgid(st.st_gid).gr_name,
                  "mode": "%04o" % (st.st_mode & 0o7777), "device": os.major(st.st_dev)}
print(json.dumps(out))
PY
""".replace("@RECORD@", repr(RECORD)).replace("@MOUNT@", repr(MOUNT_POINT)).replace("@DIR@", repr(CHECKPOINT_DIR))


def read_node(host):
    """The node's state now (one round trip)."""
    return json.loads(host.check_output(READ_NODE))


def data_names(state):
    return sorted(state["drives"][serial]["name"] for serial in DATA_SERIALS)


def mount_entry(state, mount_point=MOUNT_POINT):
    """The /proc/mounts line of mount_point as (source, fstype, options) or None."""
    for line in (state["mounts"] or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == mount_point:
            return fields[0], fields[2], fields[3]
    return None


def fstab_lines(state, mount_point=MOUNT_POINT):
    return [line.split() for line in (state["fstab"] or "").splitlines()
            if len(line.split()) >= 2 and line.split()[1] == mount_point and not line.startswith("#")]


def playbook(*extra_vars):
    """ansible-playbook converge.yml against the scenario's inventory, as Molecule runs it.

    Returns (rc, output with whitespace collapsed, the PLAY RECAP "changed=" count of node1).
    """
    argv = []
    for item in extra_vars:
        argv += ["-e", item]
    rc, output, recap = run_playbook(os.path.join(SCENARIO, "converge.yml"), *argv,
                                     env={"ANSIBLE_CALLBACK_RESULT_FORMAT": "json"})
    sys.stdout.write(output[-6000:])
    return rc, " ".join(output.replace("\\n", " ").split()), recap.get("node1", {}).get("changed")


TUNE = os.path.join(PROJECT, "playbooks", "tune_checkpoint_nodes.yml")


def tune_playbook(*argv):
    """ansible-playbook playbooks/tune_checkpoint_nodes.yml against the scenario's inventory: (rc, output with
    whitespace collapsed, the PLAY RECAP of node1)."""
    rc, output, recap = run_playbook(TUNE, *argv)
    sys.stdout.write(output[-6000:])
    return rc, " ".join(output.replace("\\n", " ").split()), recap.get("node1", {})


def killed_playbook(after, *extra_vars):
    """ansible-playbook converge.yml, SIGKILLed (controller, workers, connections) the moment the task whose name
    contains ``after`` has succeeded (callback_plugins/kill_after.py): the node is left as that step left it.

    The run gets a session of its own, so the kill reaches it and nothing of the test. Returns (rc, output):
    rc -9 and ``KILLED AFTER: <task>`` in the output when the kill happened."""
    argv = [ansible_playbook_binary(), "-i", os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"]),
            os.path.join(SCENARIO, "converge.yml")]
    for item in extra_vars:
        argv += ["-e", item]
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", XFS_KILL_AFTER=after,
               ANSIBLE_CALLBACK_PLUGINS=os.path.join(SCENARIO, "callback_plugins"), ANSIBLE_CALLBACKS_ENABLED="kill_after")
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env, cwd=SCENARIO, timeout=1800, check=False,
                          start_new_session=True)
    output = ANSI.sub("", proc.stdout)
    sys.stdout.write(output[-3000:])
    return proc.returncode, output


WIPE = r"""
set -e
umount {mount} 2>/dev/null || true
for md in $(ls /sys/block | grep '^md' || true); do
    if ls /sys/block/$md/slaves | grep -qx -e {data1} -e {data2}; then
        wipefs --all --quiet /dev/$md; mdadm --stop /dev/$md
    fi
done
# the start of each member too: a new array with the same layout would show what the old one held there
for dev in /dev/{data1} /dev/{data2}; do dd if=/dev/zero of=$dev bs=1M count=32 oflag=direct status=none; done
wipefs --all --quiet /dev/{data1} /dev/{data2}
rm -f {record}
sed -i '\#[[:space:]]{mount}[[:space:]]#d' /etc/fstab
sed -i '/ckpt/d' /etc/mdadm/mdadm.conf
"""


def wipe_volume(host):
    """Back to blank data drives and no record (the start of a first run), in one round trip: unmount, erase the
    array's signatures and stop it, zero the start of the data drives and erase their signatures, remove the
    record, the fstab and mdadm.conf lines."""
    state = read_node(host)
    data1, data2 = data_names(state)
    host.check_output(WIPE.format(mount=MOUNT_POINT, data1=data1, data2=data2, record=RECORD))
