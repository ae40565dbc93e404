# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fault suite's lab: lab nodes booted once, the collection's playbooks run against them with faults injected
while they run, and what a node must look like afterwards (nothing lost, nothing left).

``FaultLab`` boots the nodes (``lab/nvmelab.py up``: drive models on the data drives, one neighbour drive each),
prepares them (the training user, a filesystem with a planted file on the neighbour drive, a ds_config), writes
an inventory with the suite's variables, and runs ``ansible-playbook`` the way the Molecule scenarios do
(Mitogen, pipelining, the checkout's collection). ``run(..., inject=[(pattern, action)])`` reads the play's
output as it comes and calls ``action()`` once when a line matches ``pattern`` (a task starting, a progress line):
the fault lands in the middle of the play, at a known step.

``snapshot(node)`` reads, in one SSH round trip, what "nothing lost, nothing left" compares:
  - the OS drive (OS0001): SHA-256 of its first MiB without bytes 1024..8191. The lab's root filesystem is ext4
    on the whole drive (no partition table), so the first MiB is where a write that follows a planted
    ``rank_0.ckpt -> /dev/<OS drive>`` lands first (offset 0, 1 MiB requests), and what fio's sweep or the
    baseline would write at offset 0 of a wrongly chosen drive. Bytes 1024..8191 are the ext4 superblock and the
    group descriptors, which the running OS rewrites itself (mount count, free counts); the rest of the first
    MiB (the boot area before the superblock, the reserved GDT blocks) is never written by the OS;
  - the neighbour drive (NBR0001, not a data drive, unmounted): SHA-256 of the whole drive, which holds an ext4
    filesystem with a planted file, and that file's content read back;
  - processes: fio, and the collection's detached runners (``timeout`` / bash of fio_job), anything with
    ``ai_storage`` or ``checkpoint_io`` in its command line;
  - files: the job store (/run/ai_storage_checkpoint_io/jobs), the checkpoint directory's entries (shards,
    scratch files, run directories), /tmp and /var/tmp entries that name the collection or fio.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "molecule", "shared"))
from labplay import ANSI, ansible_playbook_binary  # noqa: E402  (the runner the scenarios share)

LAB = [sys.executable, os.path.join(ROOT, "lab", "nvmelab.py")]
PLAYBOOKS = os.path.join(ROOT, "playbooks")
TUNE = os.path.join(PLAYBOOKS, "tune_checkpoint_nodes.yml")
VERIFY = os.path.join(PLAYBOOKS, "verify_checkpoint_write.yml")
MOUNT_POINT = "/mnt/checkpoints"
CHECKPOINT_DIR = "/mnt/checkpoints/runs"
TRAINER = "trainer"
DS_CONFIG = "/etc/deepspeed/ds_config.json"
OS_SERIAL = "OS0001"
NEIGHBOUR_SERIAL = "NBR0001"
PLANTED = "planted-by-the-fault-suite: the neighbour's file must survive every fault\n"
JOB_STORE = "/run/ai_storage_checkpoint_io/jobs"

# The suite's inventory variables: a small checkpoint (2 ranks, 64 MiB, one run per side), polled every second,
# no baseline (the verification replays the settings found before), no floor on the bandwidth (the faults slow
# the drives down on purpose).
GROUP_VARS = {
    "checkpoint_io_training_user": TRAINER,
    "checkpoint_io_xfs": True,
    "xfs_chunk": "1M",
    "xfs_mount_point": MOUNT_POINT,
    "xfs_checkpoint_dir": CHECKPOINT_DIR,
    "xfs_training_user": TRAINER,
    "checkpoint_io_baseline_measure": False,
    "checkpoint_io_verify_ranks": 2,
    "checkpoint_io_verify_total_size": "64M",
    "checkpoint_io_verify_repeats": 1,
    "checkpoint_io_verify_poll": 1,
    "checkpoint_io_verify_min_fraction": 0.0,
    # the faults land in the write; the restore read after it (molecule/default proves it) would read a drive
    # throttled to THROTTLE for seconds more per case
    "checkpoint_io_verify_restore": False,
    "checkpoint_io_lock_wait": 0,
    # every case injects its fault into a write: a run that reused the last verification or sweep (nothing it
    # depended on changed) would write nothing for the fault to land in; the reuse itself is proven by
    # tests/integration/playbooks/test_remeasure_verification.py and molecule/default
    "checkpoint_io_remeasure": "always",
}
# The plays that change drives go to every node at once: a fault on one node fails that node, the other goes on
# (with the canary batches a fault on the canary stops the run, as it should on a fleet). An extra variable: the
# play keyword serial is templated before any host is known, so inventory variables do not reach it.
EXTRA_VARS = {"checkpoint_io_serial": ["100%"]}

# Runs on the node: everything a check after a fault compares, as JSON (one round trip: ~1 s on a TCG guest).
SNAPSHOT = r"""
python3 - <<'PY'
import glob, hashlib, json, mmap, os, subprocess

def by_serial(serial):
    for ctrl in glob.glob("/sys/class/nvme/nvme*"):
        try:
            if open(ctrl + "/serial").read().strip() != serial:
                continue
        except OSError:
            continue
        for ns in sorted(glob.glob(ctrl + "/" + os.path.basename(ctrl) + "n*")):
            return "/dev/" + os.path.basename(ns)
    return None

def read_direct(dev, offset, length):
    # the drive's own bytes (O_DIRECT: no page cache between the drive and this check)
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    try:
        buf = mmap.mmap(-1, length)
        got = os.preadv(fd, [buf], offset)
        return bytes(buf[:got])
    finally:
        os.close(fd)

def os_region(dev):
    data = read_direct(dev, 0, 1 << 20)
    return hashlib.sha256(data[:1024] + data[8192:]).hexdigest()

def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return "error: %s" % exc.strerror

out = {"drives": {}, "processes": [], "tmp": []}
for serial in ("@OS@", "@NBR@"):
    out["drives"][serial] = by_serial(serial)
os_dev = out["drives"]["@OS@"]
out["os_first_mib"] = os_region(os_dev) if os_dev else None
nbr = out["drives"]["@NBR@"]
dump = subprocess.run(["debugfs", "-R", "cat /planted", nbr], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                      universal_newlines=True) if nbr else None
out["neighbour_file"] = dump.stdout if dump else None
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid() or int(pid) == os.getppid():
        continue
    try:
        argv = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
    except OSError:
        continue
    line = b" ".join(argv).decode("utf-8", "replace").strip()
    if not line or "@MARK@" in line:
        continue
    name = os.path.basename(argv[0].decode("utf-8", "replace"))
    if name in ("fio", "timeout") or "ai_storage" in line or "checkpoint_io" in line:
        out["processes"].append(line)
out["job_store"] = listing("@JOBS@") if os.path.isdir("@JOBS@") else []
out["checkpoint_dir"] = listing("@DIR@") if os.path.isdir("@DIR@") else None
for tmp in ("/tmp", "/var/tmp"):
    for entry in listing(tmp) if os.path.isdir(tmp) else []:
        if "fio" in entry or "checkpoint" in entry or "ai_storage" in entry or entry.endswith(".ckpt"):
            out["tmp"].append(os.path.join(tmp, entry))
out["mounts"] = [line.split()[:3] for line in open("/proc/mounts") if "@MOUNT@" in line]
try:  # what the state store still knows of run directories (says why one is left, when one is)
    out["scratch_record"] = open("/var/lib/ai_storage_checkpoint_io/scratch.json").read()
except OSError:
    out["scratch_record"] = None
os.sync()  # a write that went through the page cache reaches the drive: the host hashes the drive's file next
print(json.dumps(out))
PY
""".replace("@OS@", OS_SERIAL).replace("@NBR@", NEIGHBOUR_SERIAL).replace("@JOBS@", JOB_STORE) \
   .replace("@DIR@", CHECKPOINT_DIR).replace("@MOUNT@", MOUNT_POINT).replace("@MARK@", "fault-suite-snapshot")

# Runs on the node once: the training user, the neighbour's filesystem and its planted file, a ds_config.
PREPARE = r"""
set -e
udevadm settle --timeout=60
id @USER@ >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash @USER@
nbr=""
for c in /sys/class/nvme/nvme*; do
  [ "$(echo $(cat $c/serial))" = "@NBR@" ] && nbr=/dev/$(basename $(ls -d $c/nvme*n* | head -n 1))
done
[ -n "$nbr" ]
if [ "$(blkid -o value -s TYPE $nbr || true)" != ext4 ]; then
  mkfs.ext4 -q -F -L neighbour "$nbr"
  d=$(mktemp -d)
  mount "$nbr" "$d"
  printf '%s' "$PLANTED" > "$d/planted"
  umount "$d"; rmdir "$d"
fi
mkdir -p /etc/deepspeed
[ -e @DS@ ] || printf '%s\n' '{"train_batch_size": 8, "aio": {"block_size": 1048576, "queue_depth": 8}}' > @DS@
echo prepared
""".replace("@USER@", TRAINER).replace("@NBR@", NEIGHBOUR_SERIAL).replace("@DS@", DS_CONFIG)


def flat(text):
    """Output with whitespace collapsed and YAML/JSON line escapes undone (messages wrap across lines)."""
    return " ".join(text.replace("\\n", " ").split())


class Run(object):
    """One ansible-playbook run: rc, the whole output, the recap {host: counters}, the faults that fired."""

    def __init__(self, argv, rc, output, seconds, fired):
        self.argv = argv
        self.rc = rc
        self.output = output
        self.seconds = seconds
        self.fired = fired
        self.recap = {}
        for host, counters in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", output, re.MULTILINE):
            self.recap[host] = dict((key, int(value)) for key, value in re.findall(r"(\w+)=(\d+)", counters))

    def failures(self, host):
        """The flattened text of every 'fatal: [host]' / 'failed: [host]' block of the run."""
        blocks = re.findall(r"^(?:fatal|failed): \[%s\].*?(?=^\S)" % re.escape(host), self.output + "\nEND",
                            re.MULTILINE | re.DOTALL)
        return [flat(block) for block in blocks]

    def failed(self, host):
        counters = self.recap.get(host, {})
        return counters.get("failed", 0) > 0 or counters.get("unreachable", 0) > 0

    def changed(self, host):
        return self.recap.get(host, {}).get("changed")

    def tail(self, chars=6000):
        head = "%s\nrc=%s recap=%s fired=%s (%.0f s)" % (" ".join(self.argv[-6:]), self.rc, self.recap, self.fired,
                                                         self.seconds)
        return "%s\n%s" % (head, self.output[-chars:])


class FaultLab(object):
    """Lab nodes for the fault suite (see the module's doc)."""

    def __init__(self, state_dir, nodes, reuse=False, log=None):
        self.state_dir = os.path.abspath(state_dir)
        self.nodes = nodes
        self.reuse = reuse
        self.log = log or sys.stdout
        self.inventory = os.path.join(self.state_dir, "faults-inventory")
        self.reports = os.path.join(self.state_dir, "reports")
        self.booted = False

    # --- the lab -----------------------------------------------------------------------------------------------
    def nvmelab(self, *args, check=True, timeout=900):
        proc = subprocess.run(LAB + list(args[:1]) + ["--state-dir", self.state_dir] + list(args[1:]),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              timeout=timeout, check=False)
        if check:
            assert proc.returncode == 0, "nvmelab %s failed:\n%s" % (" ".join(args), proc.stdout)
        return proc

    def up(self, drive_models):
        start = time.time()
        if self.reuse and os.path.exists(os.path.join(self.state_dir, "state.json")):
            status = self.nvmelab("status", check=False)
            if status.returncode == 0 and status.stdout.count("running") == len(self.nodes):
                self.say("reusing the lab in %s" % self.state_dir)
                self.write_inventory()
                return
        args = ["up", "--data-size", "2G", "--neighbour-drives", "1", "--neighbour-size", "64M"]
        for name, release in self.nodes:
            args += ["--node", "%s:%s" % (name, release)]
        for spec in drive_models:
            args += ["--drive-model", spec]
        self.nvmelab(*args)
        self.booted = True
        self.say("booted %s in %.0f s" % (", ".join(n for n, r in self.nodes), time.time() - start))
        self.write_inventory()

    def down(self):
        if self.booted or not self.reuse:
            self.nvmelab("down", check=False)

    def write_inventory(self):
        os.makedirs(os.path.join(self.inventory, "group_vars"), exist_ok=True)
        shutil.copy(os.path.join(self.state_dir, "inventory.yml"), os.path.join(self.inventory, "hosts.yml"))
        group_vars = dict(GROUP_VARS, checkpoint_io_report_dir=self.reports)
        with open(os.path.join(self.inventory, "group_vars", "checkpoint_nodes.yml"), "w") as handle:
            handle.write("---\n# Written by tests/lab/faultlab.py: the fault suite's variables.\n")
            for key in sorted(group_vars):
                handle.write("%s: %s\n" % (key, json.dumps(group_vars[key])))

    def unreachable_inventory(self, name):
        """An inventory file with one more node whose SSH port has nothing listening (a real unreachable host)."""
        import socket
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        path = os.path.join(self.state_dir, "unreachable.yml")
        with open(path, "w") as handle:
            handle.write("all:\n  children:\n    checkpoint_nodes:\n      hosts:\n        %s:\n"
                         "          ansible_host: 127.0.0.1\n          ansible_port: %d\n"
                         "          ansible_user: root\n          checkpoint_io_data_drives:\n"
                         "            serials: [DATA0001, DATA0002]\n" % (name, port))
        return path

    def say(self, text):
        self.log.write("[faults %s] %s\n" % (time.strftime("%H:%M:%S"), text))
        self.log.flush()

    # --- nodes -------------------------------------------------------------------------------------------------
    def ssh(self, node, script, check=True, timeout=600):
        proc = self.nvmelab("ssh", node, "--", "sh", "-c", shlex.quote(script), check=False, timeout=timeout)
        if check:
            assert proc.returncode == 0, "%s: %s\n%s" % (node, script[:200], proc.stdout[-3000:])
        return proc.stdout

    def prepare(self, node):
        out = self.ssh(node, "PLANTED=%s; export PLANTED; %s" % (shlex.quote(PLANTED), PREPARE))
        assert "prepared" in out, out

    def snapshot(self, node):
        """What nothing-lost / nothing-left compares (see the module's doc); the neighbour drive is hashed on the
        host, from the plain file QEMU serves it from (after a sync in the guest), which costs no guest CPU."""
        out = self.ssh(node, "# fault-suite-snapshot\n" + SNAPSHOT)
        snap = json.loads(out[out.index("{"):])
        digest = hashlib.sha256()
        with open(self.drive_file(node, NEIGHBOUR_SERIAL), "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        snap["neighbour_sha"] = digest.hexdigest()
        return snap

    def drive_file(self, node, serial):
        with open(os.path.join(self.state_dir, "state.json")) as handle:
            state = json.load(handle)
        for entry in state["nodes"]:
            if entry["name"] == node:
                for drive in entry["drives"]:
                    if drive["serial"] == serial:
                        return drive["backing"]
        raise AssertionError("no drive %s on %s in the lab's state" % (serial, node))

    def device(self, node, serial):
        out = self.ssh(node, "for c in /sys/class/nvme/nvme*; do [ \"$(echo $(cat $c/serial))\" = %s ] && "
                             "basename $(ls -d $c/nvme*n* | head -n 1); done; true" % serial)
        names = out.split()
        return "/dev/" + names[0] if names else None

    # --- playbooks ---------------------------------------------------------------------------------------------
    def env(self):
        strategy = os.path.join(ROOT, "tests", "ansible_plugins", "strategy")
        return dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                    ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "collections"),
                    ANSIBLE_STRATEGY_PLUGINS=strategy, ANSIBLE_STRATEGY="mitogen_linear",
                    ANSIBLE_PIPELINING="True", ANSIBLE_TIMEOUT="120", ANSIBLE_HOST_KEY_CHECKING="False",
                    ANSIBLE_PYTHON_INTERPRETER="/usr/bin/python3", ANSIBLE_CALLBACK_RESULT_FORMAT="yaml",
                    ANSIBLE_RETRY_FILES_ENABLED="False",
                    ANSIBLE_SSH_ARGS="-o ControlMaster=auto -o ControlPersist=60s -o ServerAliveInterval=5 "
                                     "-o ServerAliveCountMax=6")

    def _fire(self, item, fired):
        try:
            item[1]()
            fired.append(item[0].pattern)
        except Exception as exc:  # the play goes on; the test sees that the fault did not land
            self.say("the fault failed: %s" % exc)
            fired.append("FAILED %s: %s" % (item[0].pattern, exc))

    def run(self, playbook, *extra, limit=None, inventories=(), inject=(), timeout=900, strategy=None):
        """ansible-playbook PLAYBOOK against the suite's inventory; each (pattern, action) of ``inject`` fires
        once, on the first output line that matches ``pattern``, while the play goes on."""
        argv = [ansible_playbook_binary(), "-i", self.inventory]
        for path in inventories:
            argv += ["-i", path]
        argv += [playbook, "-e", json.dumps(EXTRA_VARS)]
        if limit:
            argv += ["--limit", limit]
        argv += list(extra)
        env = self.env()
        if strategy:
            env["ANSIBLE_STRATEGY"] = strategy
        pending = [(re.compile(pattern), action) for pattern, action in inject]
        fired = []
        threads = []
        lines = []
        start = time.time()
        # a session of its own: a fault may signal the whole run (controller, workers, connections) as a lost
        # controller would, and nothing of the suite
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True, env=env, cwd=self.state_dir, start_new_session=True)
        self.proc = proc
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            for line in proc.stdout:
                line = ANSI.sub("", line)
                lines.append(line)
                for item in list(pending):
                    if item[0].search(line):
                        pending.remove(item)
                        self.say("fault at %r: %s" % (line.strip()[:100], getattr(item[1], "__doc__", None)
                                                      or item[1]))
                        # In a thread of its own: the play goes on (and its output is read) while the fault lands.
                        thread = threading.Thread(target=self._fire, args=(item, fired))
                        thread.start()
                        threads.append(thread)
            proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
            for thread in threads:
                thread.join(timeout=600)
        run = Run(argv, proc.returncode, "".join(lines), time.time() - start, fired)
        # every run's whole output, for the case that failed (the report shows its tail)
        self.runs = getattr(self, "runs", 0) + 1
        logs = os.path.join(self.state_dir, "runs")
        os.makedirs(logs, exist_ok=True)
        with open(os.path.join(logs, "%02d-%s.log" % (self.runs, os.path.basename(playbook))), "w") as handle:
            handle.write(" ".join(argv) + "\n" + run.output)
        self.say("%s %s: rc=%s %s (%.0f s)" % (os.path.basename(playbook), " ".join(extra), run.rc, run.recap,
                                               run.seconds))
        return run


# --- what every case checks ----------------------------------------------------------------------------------
class Checks(object):
    """Every expectation of a case is checked, even after one failed (the report lists them all)."""

    def __init__(self, case):
        self.case = case
        self.failures = []

    def __call__(self, condition, what, detail=""):
        if not condition:
            self.failures.append("%s\n%s" % (what, str(detail)[-4000:]))
        return condition

    def done(self):
        assert not self.failures, "%s: %d expectation(s) failed:\n\n%s" % (
            self.case, len(self.failures), "\n\n".join(self.failures))


def intact(lab, node, checks, allowed_in_dir=()):
    """Nothing lost, nothing left on ``node`` (see the module's doc)."""
    snap = lab.snapshot(node)
    ref = lab.reference[node]
    checks(snap["os_first_mib"] == ref["os_first_mib"], "%s: the OS drive's first MiB changed" % node, snap)
    checks(snap["neighbour_sha"] == ref["neighbour_sha"], "%s: the neighbour drive %s changed" % (
        node, NEIGHBOUR_SERIAL), snap)
    checks(snap["neighbour_file"] == PLANTED, "%s: the neighbour's planted file is not what was planted" % node, snap)
    checks(not snap["processes"], "%s: processes left: %s" % (node, snap["processes"]))
    checks(not snap["job_store"], "%s: job records left: %s" % (node, snap["job_store"]))
    checks(not snap["tmp"], "%s: scratch files left in /tmp, /var/tmp: %s" % (node, snap["tmp"]))
    left = [entry for entry in snap["checkpoint_dir"] or [] if entry not in allowed_in_dir]
    checks(not left, "%s: left in %s: %s (the state store's scratch record: %s; mounts: %s)" % (
        node, CHECKPOINT_DIR, left, snap.get("scratch_record"), snap.get("mounts")))
    return snap


def converges(lab, checks, playbook, hosts, *extra, changes=True):
    """After the fault is cleared: a rerun on ``hosts`` (a name or a list) passes, then a further run changes
    nothing. ``changes``: True - the rerun must change something (it finishes the interrupted work); False - the
    rerun itself must be changed=0 (no further run); None - either (the fault may have struck before or after the
    change)."""
    hosts = [hosts] if isinstance(hosts, str) else list(hosts)
    run = lab.run(playbook, *extra, limit=",".join(hosts))
    checks(run.rc == 0, "%s: the rerun after the fault was cleared failed" % hosts, run.tail())
    if changes is False:
        checks(all(run.changed(host) == 0 for host in hosts), "%s: the rerun is not changed=0" % hosts, run.tail())
        return run
    if changes:
        checks(all((run.changed(host) or 0) > 0 for host in hosts),
               "%s: the rerun changed nothing (expected it to finish the work)" % hosts, run.tail())
    if any(run.changed(host) for host in hosts):
        run = lab.run(playbook, *extra, limit=",".join(hosts))
        checks(run.rc == 0 and all(run.changed(host) == 0 for host in hosts),
               "%s: a further run is not changed=0" % hosts, run.tail())
    return run
