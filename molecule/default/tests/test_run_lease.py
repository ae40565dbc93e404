"""Two runs of tune_checkpoint_nodes.yml on the same lab nodes at once: the second is refused on every node,
naming the first (its controller pid), before it gathers or changes anything; a third with
checkpoint_io_lock_wait waits for the first and then runs. The real playbook on both lab nodes, the
`always` plays only (inputs, lease, facts, the recorded baseline, the summary): seconds of work per node under
TCG, long enough for a second run to find the node held."""
import os
import re
import subprocess
import time

from labplay import ANSI, ansible_playbook_binary

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONVERGE = os.path.join(SCENARIO, "converge.yml")
NODES = ("node1", "node2")


def _argv(*extra):
    inventory = os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"])
    return [ansible_playbook_binary(), "-i", inventory, CONVERGE, "--tags", "summary"] + list(extra)


def _env():
    return dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")


def _recap(output):
    return dict((host, dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", counters)))
                for host, counters in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", output, re.MULTILINE))


def _start(*extra):
    return subprocess.Popen(_argv(*extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(),
                            cwd=SCENARIO)


def _read_until_leased(proc, timeout=600):
    """The first run's output up to the end of its lease task (both nodes taken)."""
    lines, seen, in_lease = [], set(), False
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        line = ANSI.sub("", line)
        lines.append(line)
        if line.startswith("TASK ["):
            in_lease = "Take this node for the run" in line  # TASK [ai_storage.checkpoint_io.preflight : Take ...
        elif in_lease:
            for node in NODES:
                if re.match(r"^ok: \[%s\]" % node, line):
                    seen.add(node)
            if seen == set(NODES):
                return "".join(lines)
    raise AssertionError("the first run never took both nodes:\n" + "".join(lines)[-4000:])


def test_a_second_run_is_refused_and_a_waiting_run_goes_after_the_first():
    first = _start()
    try:
        head = _read_until_leased(first)
        second = subprocess.run(_argv(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(),
                                cwd=SCENARIO, timeout=900, check=False)
        out = ANSI.sub("", second.stdout)
        assert second.returncode != 0, out[-4000:]
        assert out.count("another checkpoint_io run holds this node") >= len(NODES), out[-4000:]
        assert ":%d:" % first.pid in out, out[-4000:]  # the holder named: the first run's ansible-playbook
        assert "Gather every layer" not in out, out[-4000:]  # refused before anything was gathered
        recap = _recap(out)
        for node in NODES:
            assert recap[node]["failed"] == 1 and recap[node]["changed"] == 0, recap
        assert first.poll() is None, "the first run ended before the third started: nothing was waited for"
        third = subprocess.run(_argv("-e", "checkpoint_io_lock_wait=900"), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=_env(), cwd=SCENARIO, timeout=1800,
                               check=False)
        out_third = ANSI.sub("", third.stdout)
        rest = ANSI.sub("", first.communicate(timeout=900)[0])
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, (head + rest)[-4000:]
    assert third.returncode == 0, out_third[-4000:]  # it waited for the first run's lease, then ran
    for output in (head + rest, out_third):
        recap = _recap(output)
        for node in NODES:
            assert recap[node]["failed"] == 0 and recap[node]["changed"] == 0, recap  # a tuned node: nothing to do
