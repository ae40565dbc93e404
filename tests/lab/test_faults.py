"""The fault suite: faults injected into real lab nodes while the collection's plays run on them.

Two nodes booted once (a bookworm node with drive models on its two data drives, a trixie node: kernel 6.12 has
kernel.io_uring_disabled), each with a neighbour drive (NBR0001: not a data drive, an ext4 filesystem with a
planted file). The tests run in file order and build on each other (the first one builds the checkpoint volume
while a drive is pulled out of it). Each one injects one fault while a play runs (``FaultLab.run(inject=...)``
fires on a task's start or a progress line), then checks, on the node's own state:

- the affected host fails with a message that says what happened and what to do, and the other host finishes;
- once the fault is cleared, a rerun converges with no force (a play that changes something: changed, then a
  further run changed=0; the verification changes nothing, so its rerun passing is the convergence);
- nothing lost, nothing left (faultlab.py's SNAPSHOT): the OS drive's first MiB (less the ext4 superblock and
  group descriptors the OS rewrites) and the whole neighbour drive byte-identical to before the first play, its
  planted file readable; no fio or runner process, no job record, no shard, scratch file or run directory.

What the collection does for each fault, and the test that shows it:

| fault | what the collection does | test |
| --- | --- | --- |
| hot-remove in the xfs play | node1 fails naming the drive that left; back in, the next run finishes the volume | test_01 |
| hot-remove in the verification | node1 fails: the drive (serial, WWID) left during the write; how to make the volume whole | test_02[hot-remove] |
| critical warning raised mid-run | node1 fails after the write: which drive raised which bits; the result is not published | test_02[critical-warning] |
| I/O errors mid-verification | node1 fails: the write's error and the kernel's errors for the drive; replace it | test_02[io-errors] |
| fio absent | the verification refuses before writing: install fio | test_03 |
| kernel.io_uring_disabled=2 | the verification refuses before writing: how to allow io_uring, or use libaio | test_03 |
| reboot in block_layer | node1 fails (connection lost); the rerun takes the dead run's lease and converges | test_04 |
| nvme-cli absent | facts fall back to sysfs with a warning naming nvme-cli; the block_layer tuning still applies | test_05 |
| one host unreachable among three | Ansible fails that host (UNREACHABLE, named); the other two finish | test_05 |
| two runs at once | the run lease: refused naming the holder, or serialised | molecule/default/tests/test_run_lease.py |
| links planted by the training user | nothing written through them, nothing of the user's deleted or changed | test_06 |
| Ctrl-C (SIGINT) to ansible-playbook mid-write | fio stops within the heartbeat; the next run leaves nothing | test_controller_stops.py |
| the controller killed (SIGKILL to its process group) mid-write | the same: nothing polls, the job stops itself | test_controller_stops.py |

``CHECKPOINT_IO_FAULTS_LAB=DIR`` keeps the lab in DIR and reuses it when its nodes run (for working on a test).
"""
import json
import os
import re
import shlex
import shutil
import time

import pytest

from faultlab import (
    CHECKPOINT_DIR,
    MOUNT_POINT,
    NEIGHBOUR_SERIAL,
    OS_SERIAL,
    PLANTED,
    ROOT,
    TRAINER,
    TUNE,
    VERIFY,
    DS_CONFIG,
    Checks,
    FaultLab,
    converges,
    intact,
)

NODES = (("node1", "bookworm"), ("node2", "trixie"))
# The data drives of node1 behind nbdkit: a 70 MiB/s ceiling, throttled to THROTTLE while a fault is injected so
# that the checkpoint write (64 MiB) lasts seconds and the fault lands in the middle of it.
DRIVE_MODELS = ("data1:knee8", "data2:knee8")
THROTTLE = "5%"
AFTER_WRITE = r"TASK \[.*Poll the checkpoint write \(after"
STARTED = time.time()
# A reboot of a bookworm node takes 20-70 s, and several minutes on a machine shared with other lab nodes.
REBOOT_TIMEOUT = "600"


@pytest.fixture(scope="module")
def lab():
    reuse = os.environ.get("CHECKPOINT_IO_FAULTS_LAB")
    state = reuse or os.path.join(ROOT, ".lab", "faults-%d" % os.getpid())
    lab = FaultLab(state, NODES, reuse=bool(reuse))
    try:
        lab.up(DRIVE_MODELS)
        for name, _release in NODES:
            lab.prepare(name)
        lab.reference = dict((name, lab.snapshot(name)) for name, _release in NODES)
        for name, snap in lab.reference.items():
            assert snap["neighbour_file"] == PLANTED and snap["os_first_mib"], (name, snap)
        yield lab
    finally:
        lab.say("fault suite: %.0f s" % (time.time() - STARTED))
        if not reuse:
            lab.down()
            shutil.rmtree(state, ignore_errors=True)


def failure_text(run, host):
    return " ".join(run.failures(host))


def expect_failed(run, host, checks, *phrases, others_finish=True):
    """``host`` failed, each phrase (a regex) is in what its failure says; the other host finished (unless
    ``others_finish`` is false: a run with a fault on each node)."""
    text = failure_text(run, host)
    checks(run.failed(host), "%s did not fail" % host, run.tail())
    for phrase in phrases:
        checks(re.search(phrase, text), "%s's failure does not say %r" % (host, phrase), text or run.tail())
    for other in run.recap if others_finish else ():
        if other != host and other in dict(NODES):
            checks(not run.failed(other), "%s (no fault) did not finish" % other, run.tail())


def throttled(lab, node, percent):
    for drive in ("data1", "data2"):
        lab.nvmelab("throttle", node, drive, percent)


def fault(lab, *args):
    """A fault to inject: one nvmelab command (run on the controller while the play goes on)."""
    def action():
        lab.nvmelab(*args)
    action.__doc__ = " ".join(args)
    return action


def verify_with_fault(lab, checks, action):
    """The verification on both nodes, node1's data drives throttled so that its writes last seconds, ``action``
    fired as the tuned write starts on the nodes."""
    throttled(lab, "node1", THROTTLE)
    try:
        run = lab.run(VERIFY, inject=[(AFTER_WRITE, action)])
    finally:
        throttled(lab, "node1", "off")
    checks(run.fired, "the fault never fired", run.tail())
    return run


def wait_for_volume(lab, node, timeout=int(REBOOT_TIMEOUT)):
    """A node that answers SSH after a reboot is not done booting: wait until its checkpoint volume is mounted."""
    deadline = time.time() + timeout
    while time.time() < deadline and not volume_mounted(lab, node):
        time.sleep(5)


def volume_mounted(lab, node):
    return MOUNT_POINT in lab.ssh(node, "cat /proc/mounts", check=False)


def ensure_volume(lab, node):
    """A case needs the checkpoint volume: when an earlier case left it broken (and failed saying so), put it back
    by hand (assemble from mdadm.conf, mount from fstab) so that this case tests its own fault."""
    if not volume_mounted(lab, node):
        lab.say("%s: the checkpoint volume is not mounted (an earlier case failed): assembling and mounting it" % node)
        lab.ssh(node, "mdadm --stop --scan; mdadm --assemble --scan; mount -a; udevadm settle", check=False)
    if not volume_mounted(lab, node):
        lab.say("%s: still no checkpoint volume: letting the xfs role finish it" % node)
        lab.run(TUNE, "--tags", "xfs", limit=node)
    assert volume_mounted(lab, node), "%s: no checkpoint volume at %s" % (node, MOUNT_POINT)


def test_01_hot_remove_in_the_xfs_play(lab):
    """Case 1a: DATA0002 of node1 leaves between mdadm --create and mkfs.xfs while both nodes build the volume."""
    checks = Checks("hot-remove in the xfs play")

    run = lab.run(TUNE, "--tags", "xfs", inject=[(r"TASK \[ai_storage.checkpoint_io.xfs : Plan again on the array",
                                                  fault(lab, "hot-remove", "node1", "data2", "--wait"))])
    checks(run.fired, "the fault never fired", run.tail())
    expect_failed(run, "node1", checks, r"DATA0002", r"(gone|left|vanished|missing|not on the node)",
                  r"(run (it )?again|rerun)")
    checks(run.changed("node2") and not run.failed("node2"), "node2 did not build its volume", run.tail())
    lab.nvmelab("hot-add", "node1", "data2", "--wait")
    converges(lab, checks, TUNE, "node1", "--tags", "xfs")
    intact(lab, "node1", checks)
    intact(lab, "node2", checks)
    checks.done()


WAIT_FOR_VOLUME = ("wait-for-the-volume",)
# How a case whose fault broke node1's checkpoint volume is cleared after the fault itself: a power cycle, then the
# wait until the boot has the volume mounted again (see case 1b).
POWER_CYCLE = (("reboot", "node1", "--hard", "--timeout", REBOOT_TIMEOUT), WAIT_FOR_VOLUME)
# Faults raised while node1 writes the checkpoint (the verification on both nodes): (id, the fault, what node1's
# failure must say, how the fault is cleared). Cleared, the verification's rerun on node1 must pass.
MID_WRITE = [
    # Case 1b: DATA0002 leaves; cleared: the drive is back and the node power-cycled (mdadm.conf assembles the
    # array, fstab mounts it, XFS replays its log) and done booting (the volume mounted). A power cycle, not a clean
    # reboot: the clean shutdown of a RAID0 that lost a member under a mounted XFS is slow (the case's clearing
    # took 9 minutes that way, 2026-12-03; the shutdown log was not kept), and the fault under test is the removal.
    ("hot-remove", ("hot-remove", "node1", "data2", "--wait"),
     (r"DATA0002 \(nvme\d+n1\), a drive the checkpoint directory is on, left the node", r"then run again"),
     (("hot-add", "node1", "data2", "--wait"),) + POWER_CYCLE),
    # Case 2: DATA0001 raises critical warning 0x02 (temperature); cleared: the warning is cleared.
    ("critical-warning", ("critical-warning", "node1", "data1", "2"),
     (r"DATA0001 \(nvme\d+n1\) raised critical warning 0x02 \(temperature", r"not published", r"then run again"),
     (("critical-warning", "node1", "data1", "0"),)),
    # Case 7: DATA0001 fails every write (the drive model's error filter); cleared: it writes again and the node is
    # power-cycled like case 1b (md marks the RAID0 broken on the failed writes and systemd unmounts its XFS,
    # measured; the boot assembles and mounts it again).
    ("io-errors", ("fail-io", "node1", "data1", "on"),
     (r"the checkpoint-write verification failed at",
      r"The kernel logged errors for the checkpoint volume's drives \(.*nvme\d+n1", r"replace it", r"then run again"),
     (("fail-io", "node1", "data1", "off"),) + POWER_CYCLE),
]


@pytest.mark.parametrize("case", MID_WRITE, ids=[case[0] for case in MID_WRITE])
def test_02_fault_while_the_checkpoint_is_written(lab, case):
    """Cases 1b, 2 and 7: a drive of node1 leaves, raises a critical warning or fails its writes mid-write."""
    name, raise_it, phrases, clear_it = case
    checks = Checks("%s while the checkpoint is written" % name)
    ensure_volume(lab, "node1")
    try:
        run = verify_with_fault(lab, checks, fault(lab, *raise_it))
    finally:
        for command in clear_it:
            if command is WAIT_FOR_VOLUME:
                wait_for_volume(lab, "node1")
            else:
                lab.nvmelab(*command)
    expect_failed(run, "node1", checks, *phrases)
    # The rerun may change something: its preflight reaps what the failed write could not remove (a volume that
    # failed under the write loses the removal at the next mount; the record kept it for this run). A further run
    # then changes nothing.
    converges(lab, checks, VERIFY, "node1", changes=None)
    intact(lab, "node1", checks)
    checks.done()


def test_03_a_missing_tool_or_io_uring_disabled_refused_before_writing(lab):
    """Cases 5 and 3: no fio on node1, kernel.io_uring_disabled=2 on node2 (the trixie node: kernel 6.12 has the
    sysctl), in one run: each node's verification refuses before it writes, saying what to do."""
    checks = Checks("fio absent, kernel.io_uring_disabled=2")
    ensure_volume(lab, "node1")
    lab.nvmelab("tool", "node1", "fio", "hide")
    lab.nvmelab("sysctl", "node2", "kernel.io_uring_disabled=2")
    try:
        run = lab.run(VERIFY)
    finally:
        lab.nvmelab("tool", "node1", "fio", "restore")
        lab.nvmelab("sysctl", "node2", "kernel.io_uring_disabled=0")
    checks(run.failed("node1") and run.failed("node2"), "a node with its fault did not fail", run.tail())
    expect_failed(run, "node1", checks, r"node1: fio is not installed", r"Install it \(apt-get install fio",
                  r"Nothing was written", others_finish=False)
    expect_failed(run, "node2", checks, r"node2: kernel.io_uring_disabled=2: io_uring is disabled for every process",
                  r"Allow it \(sysctl kernel.io_uring_disabled=0", r"checkpoint_io_verify_ioengine: libaio",
                  r"Nothing was written", others_finish=False)
    converges(lab, checks, VERIFY, ["node1", "node2"], changes=False)
    intact(lab, "node1", checks)
    intact(lab, "node2", checks)
    checks.done()


def test_04_reboot_in_the_block_layer_play(lab):
    """Case 8: node1 is reset (QMP system_reset, a power cycle) while block_layer writes its queues."""
    checks = Checks("reboot in block_layer")

    run = lab.run(TUNE, "--tags", "block_layer",
                  inject=[(r"TASK \[ai_storage.checkpoint_io.block_layer : Write the block queue",
                           fault(lab, "reboot", "node1", "--hard", "--timeout", REBOOT_TIMEOUT))])
    checks(run.fired, "the fault never fired", run.tail())
    expect_failed(run, "node1", checks, r"node1")
    checks(run.changed("node2"), "node2 was not tuned", run.tail())
    converges(lab, checks, TUNE, "node1", "--tags", "block_layer", changes=None)
    intact(lab, "node1", checks)
    checks.done()


def test_05_nvme_cli_absent_and_an_unreachable_host(lab):
    """Cases 4 and 6, in one run of block_layer (read-ahead 2 MiB, a change on both nodes): no nvme-cli on node1 (the
    facts read the drives with the NVMe admin ioctl instead, and the tuning applies), and a third inventory host, node3,
    whose SSH port has nothing listening (Ansible fails it, naming it; node1 and node2 finish)."""
    checks = Checks("nvme-cli absent, one host unreachable")
    extra = ("--tags", "block_layer", "-e", "block_layer_read_ahead=2M")
    lab.nvmelab("tool", "node1", "nvme", "hide")
    try:
        run = lab.run(TUNE, *extra, inventories=[lab.unreachable_inventory("node3")])
    finally:
        lab.nvmelab("tool", "node1", "nvme", "restore")
    checks(run.recap.get("node3", {}).get("unreachable") == 1, "node3 is not reported unreachable", run.tail())
    checks(re.search(r"^fatal: \[node3\]: UNREACHABLE!", run.output, re.MULTILINE), "the failure does not name node3",
           run.tail())
    for node in ("node1", "node2"):
        checks(not run.failed(node) and (run.changed(node) or 0) > 0,
               "%s did not apply the read-ahead beside the unreachable node3" % node, run.tail())
    # Without nvme-cli the facts still read the SMART log and Identify Controller with the NVMe admin ioctl: no
    # fallback to sysfs alone, so no warning (a node where the ioctl is refused too gets one: unit tests).
    checks(not re.search(r"nvme-cli \(nvme\) is not installed", run.output),
           "a warning says the facts come from sysfs alone although the admin ioctl answers", run.tail())
    read_ahead = lab.ssh("node1", "cat /sys/block/%s/queue/read_ahead_kb" % os.path.basename(
        lab.device("node1", "DATA0001")))
    checks(read_ahead.strip() == "2048", "node1: read_ahead_kb of DATA0001 is %s, not 2048" % read_ahead.strip())
    # Cleared (nvme-cli back, node3 out of the inventory): both nodes are tuned already.
    converges(lab, checks, TUNE, ["node1", "node2"], *extra, changes=False)
    intact(lab, "node1", checks)
    checks.done()


# Case 9, two runs of the collection at once on the same nodes: molecule/default/tests/test_run_lease.py (three runs
# of tune_checkpoint_nodes.yml started at once: refused naming the holder, or serialised by the run lease).

ATTACK = r"""
cd @DIR@
# the training user's own files, planted once: a regular file with a shard's name, a checkpoint of its own, a link
printf 'user-shard\n' > rank_1.ckpt
mkdir -p step_100 && printf 'user-step-100\n' > step_100/rank_0.ckpt && ln -sfn step_100 latest
# then, in a loop until told to stop: rank_0.ckpt pointing at the neighbour drive, rank_2/3 at the OS drive
# (ln -sfn replaces whatever is at the name: a file root made there a moment ago included)
nohup sh -c 'while [ -e /tmp/attack.on ]; do
  ln -sfn @NBR@ rank_0.ckpt; ln -sfn @OS@ rank_2.ckpt; ln -sfn @OS@ rank_3.ckpt; sleep 0.05; done' \
  >/dev/null 2>&1 &
echo planted
"""
USER_FILES = {"rank_1.ckpt": "user-shard\n", "step_100/rank_0.ckpt": "user-step-100\n"}
# the links the user planted (rank_0/2/3.ckpt lead to the node's drives: their targets are filled in by the test)
USER_LINKS = {"latest": "step_100", "rank_0.ckpt": None, "rank_2.ckpt": None, "rank_3.ckpt": None}


def test_06_symlinks_planted_by_the_training_user(lab):
    """Case 10: while the depth sweep and the verification write in the checkpoint directory (owned by the
    training user), that user plants rank_N.ckpt -> /dev/<neighbour drive> and /dev/<OS drive>, again and again."""
    checks = Checks("symlink attack")
    ensure_volume(lab, "node1")
    nbr, osd = lab.device("node1", NEIGHBOUR_SERIAL), lab.device("node1", OS_SERIAL)
    script = ATTACK.replace("@DIR@", CHECKPOINT_DIR).replace("@NBR@", nbr).replace("@OS@", osd)
    lab.ssh("node1", "touch /tmp/attack.on; chmod 644 /tmp/attack.on; runuser -u %s -- sh -c %s"
            % (TRAINER, shlex.quote(script)))
    try:
        run = lab.run(TUNE, "--tags", "deepspeed_config,verify", limit="node1",
                      *["-e", '{"checkpoint_io_deepspeed_configs": ["%s"], "checkpoint_io_queue_depth": "auto", '
                              '"deepspeed_config_sweep_depths": [1, 4], "deepspeed_config_sweep_runtime": 1, '
                              '"deepspeed_config_sweep_size_per_point": "16M", '
                              '"deepspeed_config_sweep_scratch_size": "32M"}' % DS_CONFIG])
    finally:
        lab.ssh("node1", "rm -f /tmp/attack.on; sleep 1", check=False)
    checks(run.rc == 0, "the sweep and the verification did not pass beside the planted links", run.tail())
    checks(re.search(r"Sweep the queue depth[^\n]*\n(ok|changed): \[node1\]", run.output),
           "the depth sweep did not run (a recorded sweep was reused?)", run.tail())
    checks(re.search(r"Poll the checkpoint write \(after[^\n]*\n(?:node1: [^\n]*\n)*(ok|changed): \[node1\]", run.output),
           "the verification did not write", run.tail())
    found = json.loads(lab.ssh("node1", "cd %s && python3 -c %s" % (CHECKPOINT_DIR, shlex.quote(
        "import json, os; print(json.dumps({'links': dict((f, os.readlink(f)) for f in %r if os.path.islink(f)), "
        "'files': dict((f, open(f).read()) for f in %r if os.path.isfile(f) and not os.path.islink(f))}))"
        % (sorted(USER_LINKS), sorted(USER_FILES))))))
    checks(found["links"] == dict(USER_LINKS, **{"rank_0.ckpt": nbr, "rank_2.ckpt": osd, "rank_3.ckpt": osd}),
           "the user's links changed: %s" % found["links"])
    checks(found["files"] == USER_FILES, "the user's files changed: %s" % found["files"])
    intact(lab, "node1", checks, allowed_in_dir=("rank_0.ckpt", "rank_1.ckpt", "rank_2.ckpt", "rank_3.ckpt",
                                                 "step_100", "latest"))
    checks.done()
