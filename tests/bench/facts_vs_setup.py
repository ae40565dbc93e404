"""How much does checkpoint_io_facts cost next to ansible's own `setup` (gather_subset=hardware)?

Runs both modules against the same hosts, interleaved (A B A B ...) so drift hits both alike, REPS times, and
prints the median wall time of each and their ratio from this one run. The facts are timed as a gather usually
runs (the io_uring probe read from this boot's earlier gather), as the first gather of a boot (the probe's record
removed first, untimed) and without the probe. Timing depends on the machine (TCG lab
nodes are slow), so only the ratio means anything; no test asserts on it.

    tests/bench/facts_vs_setup.py -i .lab/demo/inventory.yml [--reps 5] [--limit node1]

A lab node with many drives: `python3 lab/nvmelab.py up --state-dir .lab/bench --data-drives 8`.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# what the facts learn once a boot (the io_uring probe, fio's and nvme-cli's versions) is kept in /run/checkpoint_io:
# "first of the boot" removes it before each of its runs (not timed), so that gather asks the tools as the first one
# after a reboot does
FORGET_PROBE = ["-m", "ansible.builtin.file", "-a", "path=/run/checkpoint_io state=absent"]
CASES = [
    ("checkpoint_io_facts", ["-m", "ai_storage.checkpoint_io.checkpoint_io_facts"]),
    ("checkpoint_io_facts, first of the boot", ["-m", "ai_storage.checkpoint_io.checkpoint_io_facts"]),
    ("checkpoint_io_facts (no fio probe)", ["-m", "ai_storage.checkpoint_io.checkpoint_io_facts",
                                            "-a", "fio_probe=false"]),
    ("setup gather_subset=hardware", ["-m", "ansible.builtin.setup", "-a", "gather_subset=hardware"]),
]


def run_once(inventory, limit, argv):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    cmd = ["ansible", limit, "-i", inventory, "-o"] + argv
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout.decode(errors="replace")[-2000:])
        raise SystemExit("%s failed (rc %d)" % (" ".join(cmd), proc.returncode))
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("-i", "--inventory", required=True)
    parser.add_argument("--limit", default="all")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    # one warm-up of each: SSH control master, module caches on the node
    for dummy, argv in CASES:
        run_once(args.inventory, args.limit, argv)
    times = dict((name, []) for name, argv in CASES)
    for dummy in range(args.reps):
        for name, argv in CASES:
            if name.endswith("first of the boot"):
                run_once(args.inventory, args.limit, FORGET_PROBE)
            times[name].append(run_once(args.inventory, args.limit, argv))
    ref = statistics.median(times[CASES[-1][0]])
    print("%-38s %9s %9s %7s" % ("module (hosts: %s)" % args.limit, "median s", "min s", "ratio"))
    for name, argv in CASES:
        med = statistics.median(times[name])
        print("%-38s %9.2f %9.2f %7.2f" % (name, med, min(times[name]), med / ref))
    print("ratio = median wall time / median of `setup gather_subset=hardware`, same hosts, same run, "
          "%d interleaved repetitions" % args.reps)


if __name__ == "__main__":
    main()
