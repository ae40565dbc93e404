"""Three runs of tune_checkpoint_nodes.yml started at once on the same two lab nodes: two that refuse to wait
(checkpoint_io_lock_wait 0) and one that waits (checkpoint_io_lock_wait 900). One run takes the nodes; a
non-waiting run that finds them taken fails on every node naming the holder (its controller pid) before it
gathers or changes anything; the waiting run goes after the holder. The real playbook, its `always` plays only
(inputs, lease, facts, the recorded baseline, the summary): the same work for each run, so each reaches its lease
task at about the same time and the first holds the nodes for the seconds the rest of its plays take."""
import os
import re
import subprocess

from labplay import ANSI, ansible_playbook_binary

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONVERGE = os.path.join(SCENARIO, "converge.yml")
NODES = ("node1", "node2")
HELD = "another checkpoint_io run holds this node"


def _start(wait):
    inventory = os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"])
    argv = [ansible_playbook_binary(), "-i", inventory, CONVERGE, "--tags", "summary",
            "-e", "checkpoint_io_lock_wait=%d" % wait]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=SCENARIO,
                            env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"))


def _recap(output):
    return dict((host, dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", counters)))
                for host, counters in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", output, re.MULTILINE))


def test_concurrent_runs_are_refused_or_serialised():
    runs = [("refuse-a", _start(0)), ("refuse-b", _start(0)), ("wait", _start(900))]
    out = {}
    try:
        for name, proc in runs:
            out[name] = ANSI.sub("", proc.communicate(timeout=1800)[0])
    finally:
        for _name, proc in runs:
            if proc.poll() is None:
                proc.kill()
    rc = dict((name, proc.returncode) for name, proc in runs)
    pids = dict((name, proc.pid) for name, proc in runs)
    ran = [name for name in rc if rc[name] == 0]
    refused = [name for name in rc if rc[name] != 0]
    log = "\n".join("== %s rc=%s\n%s" % (name, rc[name], out[name][-2500:]) for name in rc)
    assert rc["wait"] == 0, log  # the waiting run always gets the nodes: first, or after the holder
    assert refused and set(refused) <= {"refuse-a", "refuse-b"}, log  # two runs never shared the nodes
    for name in refused:
        assert out[name].count(HELD) >= len(NODES), log  # refused on every node, naming why
        assert any(":%d:" % pids[holder] in out[name] for holder in ran), log  # ... and the run that held them
        assert "Gather every layer" not in out[name], log  # before anything was gathered
        recap = _recap(out[name])
        assert all(recap[node]["failed"] == 1 and recap[node]["changed"] == 0 for node in NODES), log
    for name in ran:
        recap = _recap(out[name])
        assert all(recap[node]["failed"] == 0 and recap[node]["changed"] == 0 for node in NODES), log
