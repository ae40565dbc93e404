"""Three runs of tune_checkpoint_nodes.yml started at once on the same two lab nodes: two that refuse to wait
(checkpoint_io_lock_wait 0) and one that waits (checkpoint_io_lock_wait 900). The lease is per node: on each
node one run takes it; a non-waiting run that finds the node taken fails that node, naming the run that holds it
(its controller pid), before it gathers or changes anything there, and goes on with its other nodes; the waiting
run goes after the holder. The real playbook, its `always` plays only (inputs, lease, facts, the recorded
baseline, the summary): the same work for each run, so each reaches its lease task at about the same time and
the first holds a node for the seconds the rest of its plays take."""
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
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=SCENARIO,
                            env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"))


def _recap(output):
    return dict((host, dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", counters)))
                for host, counters in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", output, re.MULTILINE))


def _refusals(output):
    """{node: the holder's controller pid} of the nodes this run was refused on, and whether the run did anything
    on such a node after the refusal (it must not: the lease is taken before anything is gathered)."""
    found = {}
    for node in NODES:
        match = re.search(r"^fatal: \[%s\]: FAILED! =>(.*?)^\S" % node, output, re.MULTILINE | re.DOTALL)
        if match and HELD in " ".join(match.group(1).split()):
            pid = re.search(r"controller_pid: (\d+)", match.group(1))
            later = re.search(r"^(ok|changed): \[%s\]" % node, output[match.end():], re.MULTILINE)
            found[node] = (int(pid.group(1)) if pid else None, bool(later))
    return found


def test_concurrent_runs_are_refused_or_serialised():
    """The lease is per node: on each node one run holds it at a time, whichever run that is."""
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
    recap = dict((name, _recap(out[name])) for name in rc)
    refusals = dict((name, _refusals(out[name])) for name in rc)
    log = "\n".join("== %s rc=%s %s\n%s" % (name, rc[name], recap[name], out[name][-2000:]) for name in rc)
    assert rc["wait"] == 0 and not refusals["wait"], log  # the waiting run gets every node, first or after
    for node in NODES:
        refused_here = [name for name in rc if node in refusals[name]]
        assert refused_here, log  # three runs at once: at least one found the node taken
        for name in rc:
            assert recap[name][node]["changed"] == 0, log  # tuned nodes: nothing to change, held or not
            if node in refusals[name]:
                holder_pid, acted_after = refusals[name][node]
                holder = [other for other in rc if pids[other] == holder_pid]
                assert holder and node not in refusals[holder[0]], log  # it names the run that held the node
                assert not acted_after and recap[name][node]["failed"] == 1, log  # and stops there on that node
            else:
                assert recap[name][node]["failed"] == 0, log  # a run that got the node ran to the end
