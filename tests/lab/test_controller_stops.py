"""The controller stops polling in the middle of a write: Ctrl-C, or the controller killed (issue 31, findings 9
and 16). Before the heartbeat, the detached fio kept writing for up to checkpoint_io_verify_timeout (3600 s) and the
scratch, the job record and the lease stayed on the node until the next run.

One bookworm node (the fault suite's lab: tests/lab/faultlab.py), a drive model on its first data drive with an
XFS on it as the checkpoint directory, throttled to 1% of its ceiling once the "before" write is done, so that the
verification's tuned 64 MiB write would take about 90 s. When the tuned write starts, ansible-playbook's process group gets SIGINT (Ctrl-C in a terminal)
or SIGKILL (a controller that dies). No poll renews the job's heartbeat (half a minute here: filter job_heartbeat),
so the node-side job stops fio within it; the next run reaps what is left (scratch, job records, the lease) and
passes, and then nothing is left on the node and nothing else was touched (faultlab's snapshot: the OS drive's
first MiB, the neighbour drive). Its own step beside the fault suite: one node, about four minutes.
"""
import os
import shutil
import signal
import subprocess
import time

import pytest

from faultlab import (
    CHECKPOINT_DIR,
    MOUNT_POINT,
    PLANTED,
    ROOT,
    TRAINER,
    VERIFY,
    Checks,
    FaultLab,
    intact,
)

NODES = (("node1", "bookworm"),)
DRIVE_MODELS = ("data1:knee8",)
BEFORE_KEPT = r"TASK \[.*Keep the before result"
AFTER_WRITE = r"TASK \[.*Poll the checkpoint write \(after"
# The verification's heartbeat with checkpoint_io_verify_poll 1 on one node (filter job_heartbeat: half a minute),
# and what a stop may take beyond it (the watchdog checks every few seconds; SIGTERM, then SIGKILL to fio).
HEARTBEAT = 30
STOP_GRACE = 40
VOLUME = r"""
set -e
dev=""
for c in /sys/class/nvme/nvme*; do
  [ "$(echo $(cat $c/serial))" = DATA0001 ] && dev=/dev/$(basename $(ls -d $c/nvme*n* | head -n 1))
done
[ -n "$dev" ]
grep -q " @MNT@ " /proc/mounts || { mkfs.xfs -q -f "$dev"; mkdir -p @MNT@; mount "$dev" @MNT@; }
install -d -o @USER@ -g @USER@ -m 0750 @DIR@
echo volume
""".replace("@MNT@", MOUNT_POINT).replace("@DIR@", CHECKPOINT_DIR).replace("@USER@", TRAINER)
EXTRA = '{"checkpoint_io_verify_dirs": ["%s"], "checkpoint_io_verify_total_size": "64M"}' % CHECKPOINT_DIR


@pytest.fixture(scope="module")
def lab():
    started = time.time()
    state = os.path.join(ROOT, ".lab", "controller-stops-%d" % os.getpid())
    lab = FaultLab(state, NODES)
    try:
        lab.up(DRIVE_MODELS)
        lab.prepare("node1")
        assert "volume" in lab.ssh("node1", VOLUME)
        lab.reference = {"node1": lab.snapshot("node1")}
        assert lab.reference["node1"]["neighbour_file"] == PLANTED
        yield lab
    finally:
        lab.say("controller-stops: %.0f s" % (time.time() - started))
        lab.down()
        shutil.rmtree(state, ignore_errors=True)


def outlived(session):
    """The processes still in the controller's session (what kept its output open), one line each."""
    out = subprocess.run(["ps", "-eo", "pid=,sid=,etimes=,args="], capture_output=True, text=True, check=False).stdout
    return ["%s %s" % (f[0], " ".join(f[3:])[:120]) for f in (line.split() for line in out.splitlines())
            if len(f) > 3 and f[1] == str(session)]


def fio_on(lab, node):
    return [line for line in lab.snapshot(node)["processes"] if "fio" in line]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGKILL"])
def test_fio_stops_within_the_heartbeat_once_the_controller_stops_polling(lab, sig):
    checks = Checks("%s to ansible-playbook during the verification" % sig)
    signum = getattr(signal, sig)

    seen = {}

    def stop_the_controller():
        # the write runs on the node (its progress polled): the controller goes away now, all of it. Ansible does
        # not always act on a single SIGINT (seen once in a clean-clone run: the playbook went on to the end, rc 0;
        # the same test alone stopped it, rc 250), so, as a person at the terminal would press Ctrl-C again, it is
        # sent again every 5 s while the controller is still there (at most 3 more times).
        # The heartbeat is counted from when ansible-playbook itself has exited, not from the end of its output:
        # Mitogen's connection process ignores SIGINT and keeps the output pipe open until it has shut down (seen:
        # 90 s), which a person at a terminal never waits for.
        proc = lab.proc
        for attempt in range(4):
            try:
                os.killpg(proc.pid, signum)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                lab.say("%s: the controller is still running 5 s later%s" % (sig, ": sent again" if attempt < 3 else ""))
        if proc.poll() is None:
            return
        seen["at"] = time.time()
        seen["outlived"] = outlived(proc.pid)
        seen["fio"] = fio_on(lab, "node1")
    stop_the_controller.__doc__ = sig

    def throttle():
        # between the before write (at full speed) and the tuned one: ~0.7 MiB/s, the 64 MiB would take about 90 s
        lab.nvmelab("throttle", "node1", "data1", "1%")
    throttle.__doc__ = "throttle data1 to 1%"
    try:
        run = lab.run(VERIFY, "-e", EXTRA, inject=[(BEFORE_KEPT, throttle), (AFTER_WRITE, stop_the_controller)])
        checks(len(run.fired) == 2 and run.rc != 0, "the run was not stopped mid-write (rc %s)" % run.rc, run.tail())
        checks("at" in seen, "ansible-playbook still ran 20 s after the first %s" % sig)
        stopped = seen.get("at", time.time())
        lab.say("%s: ansible-playbook exited; its output ended %.0f s later; still running in its session then: %s"
                % (sig, time.time() - stopped, seen.get("outlived") or "nothing"))
        checks(seen.get("fio"), "no fio right after the controller stopped (the write ended too soon to test)")
        deadline = stopped + HEARTBEAT + STOP_GRACE
        while time.time() < deadline and fio_on(lab, "node1"):
            time.sleep(3)
        left = fio_on(lab, "node1")
        lab.say("%s: fio gone %.0f s after the controller stopped (heartbeat %d s): %s"
                % (sig, time.time() - stopped, HEARTBEAT, left))
        checks(not left, "fio still runs %d s after the controller stopped: %s" % (HEARTBEAT + STOP_GRACE, left))
    finally:
        lab.nvmelab("throttle", "node1", "data1", "off")
    # the next run reaps what the stopped one left and passes; then nothing is left on the node
    rerun = lab.run(VERIFY, "-e", EXTRA)
    checks(rerun.rc == 0, "the run after the stopped one failed", rerun.tail())
    intact(lab, "node1", checks)
    checks.done()
