"""Does queue_depth auto find the depth an exhaustive grid finds, for less? One lab node, one run.

Boots a bookworm lab node (or uses -i INVENTORY), builds the checkpoint volume (xfs role: RAID0 of the data
drives) and, on that same volume, prints:
  * the checkpoint-write bandwidth (MLPerf-style: total / slowest rank) with DeepSpeed's default queue_depth 8,
    with the depth of the auto sweep, and with the best depth of an exhaustive grid of the same depths;
  * the bytes and seconds the auto sweep spent against the grid's.
TCG lab nodes are slow and noisy, so only the ratios of one run mean anything; no test asserts on them.

    python3 tests/bench/checkpoint_depth.py [-i .lab/x/inventory.yml] [--ranks 4] [--total-size 256M]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB = [sys.executable, os.path.join(ROOT, "lab", "nvmelab.py")]


def run_playbook(inventory, out, args):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    cmd = ["ansible-playbook", "-i", inventory, os.path.join(ROOT, "tests", "bench", "checkpoint_depth.yml"),
           "-e", json.dumps({"bench_out": out, "bench_host": args.host, "bench_ranks": args.ranks, "bench_total_size": args.total_size,
                             "checkpoint_io_data_drives": {"serials": ["DATA0001", "DATA0002"]}})]
    subprocess.run(cmd, env=env, check=True)
    with open(out) as handle:
        return json.load(handle)


def mib(value):
    return value / 1048576.0


def report(res):
    rows = [("default (queue_depth 8)", res["default"]), ("auto sweep depth", res["tuned"]),
            ("grid best depth", res["grid_write"])]
    base = res["default"]["throughput_gib_s"]
    print("%-26s %11s %12s %12s %9s" % ("checkpoint write", "queue_depth", "MiB/s", "slowest s", "vs default"))
    for name, row in rows:
        print("%-26s %11d %12.1f %12.2f %9.2f" % (name, row["queue_depth"], row["throughput_gib_s"] * 1024,
                                                  row["duration_s"], row["throughput_gib_s"] / base))
    auto, grid = res["auto"], res["grid"]
    print("%-26s %11s %12s %12s %9s" % ("depth search", "knee", "MiB written", "seconds", "points"))
    for name, row in (("auto (stops at plateau)", auto), ("exhaustive grid", grid)):
        print("%-26s %11d %12.1f %12.1f %9d" % (name, row["knee"]["knee"], mib(row["bytes_written"]), row["seconds"],
                                                row["points"]))
    print("auto / grid: bytes %.2f, seconds %.2f; tuned write / grid-best write bandwidth %.2f" % (
        auto["bytes_written"] / float(grid["bytes_written"]), auto["seconds"] / grid["seconds"],
        res["tuned"]["throughput_gib_s"] / res["grid_write"]["throughput_gib_s"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("-i", "--inventory", help="an existing lab inventory (default: boot one node)")
    parser.add_argument("--host", default="node1", help="the lab node to measure (default node1)")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--total-size", default="256M")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        if args.inventory:
            report(run_playbook(args.inventory, out, args))
            return
        state = os.path.join(tmp, "lab")
        subprocess.run(LAB + ["up", "--state-dir", state, "--node", "node1:bookworm"], check=True)
        try:
            report(run_playbook(os.path.join(state, "inventory.yml"), out, args))
        finally:
            subprocess.run(LAB + ["down", "--state-dir", state], check=False)


if __name__ == "__main__":
    main()
