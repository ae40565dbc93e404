"""Does queue_depth auto find the depth an exhaustive grid finds, for less? One lab node, one run.

Boots a bookworm lab node whose data drives follow a drive model (``--drive-model``, default knee8; or uses
-i INVENTORY), builds the checkpoint volume (xfs role: RAID0 of the data drives) and, on that same volume,
prints, each write repeated (5 rounds of default, auto, grid-best, interleaved, so a drift of the node falls on all
three alike; median, spread = (max - min) / median):
  * the checkpoint-write bandwidth (MLPerf-style: total / slowest rank) with DeepSpeed's default queue_depth 8,
    with the per-rank depth of the auto sweep, and with the best depth of an exhaustive grid of the same depths,
    all three against the drive model's ceiling (the array's: the drives' ceilings added up);
  * the bytes and seconds the auto sweep spent against the grid's;
  * auto / grid-best, which should be >= 0.98, and the auto sweep's bytes and seconds, which should be at most 0.2
    of the grid's (exit status 1 when they are not); when both chose the same depth the two writes ran with the
    same settings, and it says "no change" instead of a ratio of noise.
The sweeps measure the checkpoint's shape (--ranks streams at once, each at the per-rank depth, each run measured
for 4 s after a 1 s ramp): the auto sweep is queue_depth_sweep's default physics search (the first and the last
depth, Little's Law's prediction, the depths around it), the grid every depth 3 times. TCG lab nodes are slow;
ratios of one run are what it reports, never timings against a threshold.

    python3 tests/bench/checkpoint_depth.py [-i .lab/x/inventory.yml] [--ranks 4] [--total-size 256M]
                                            [--drive-model knee8]
"""
import argparse
import statistics
import sys

from bench_lab import run_bench

GRID_SHARE = 0.98
COST_SHARE = 0.2   # the auto sweep's bytes and seconds against the grid's, at most


def mib(value):
    return value / 1048576.0


def runs(results):
    """(median MiB/s, spread, queue depth, median slowest-rank seconds) of a write's repeats."""
    bws = [r["throughput_gib_s"] * 1024 for r in results]
    med = statistics.median(bws)
    spread = (max(bws) - min(bws)) / med if med else 0.0
    return med, spread, results[0]["queue_depth"], statistics.median([r["duration_s"] for r in results])


def report(res):
    """Print the tables; True when auto / grid-best >= GRID_SHARE."""
    ceiling = sum(m.get("ceiling_mib_s") or 0 for m in res.get("models", {}).values()) or None
    rows = [("default (queue_depth 8)", runs(res["default"])), ("auto sweep depth", runs(res["tuned"])),
            ("grid best depth", runs(res["grid_write"]))]
    base = rows[0][1][0]
    print("%-24s %11s %10s %7s %10s %10s %11s" % ("checkpoint write", "queue_depth", "MiB/s", "spread", "slowest s",
                                                  "vs default", "vs ceiling"))
    for name, (med, spread, depth, slowest) in rows:
        print("%-24s %11d %10.1f %6.0f%% %10.2f %10.2f %11s" % (
            name, depth, med, spread * 100, slowest, med / base,
            "%.2f" % (med / ceiling) if ceiling else "-"))
    if ceiling:
        print("%-24s %11s %10.1f   (the drive model's ceiling, both drives)" % ("drive model ceiling", "", ceiling))
    auto, grid = res["auto"], res["grid"]
    print("%-24s %11s %10s %7s %10s %10s" % ("depth search", "aggregate", "per rank", "noise", "MiB", "seconds"))
    method = (auto.get("search") or {}).get("method", "walk")
    for name, row in (("auto (%s search)" % method, auto), ("exhaustive grid", grid)):
        print("%-24s %11d %10d %6.0f%% %10.1f %10.1f" % (
            name, row["knee"]["knee"], row["knee"]["per_rank"], row["knee"]["noise"] * 100,
            mib(row["bytes_written"]), row["seconds"]))
    search = auto.get("search") or {}
    print("auto search: %s%s; Little's Law predicted depth %s per rank; measured %s (%s runs; the grid %d)" % (
        search.get("method"), " (%s)" % search["reason"] if search.get("reason") else "",
        search.get("predicted_depth"), search.get("measured_depths"), search.get("runs"),
        sum(len(p.get("repeats") or ()) for p in grid["curve"])))
    cost = (auto["bytes_written"] / float(grid["bytes_written"]), auto["seconds"] / grid["seconds"])
    print("auto / grid: bytes %.2f, seconds %.2f (want <= %.2f each)" % (cost[0], cost[1], COST_SHARE))
    cheap = max(cost) <= COST_SHARE
    if rows[1][1][2] == rows[2][1][2]:
        # The same depth: the two writes ran with the same settings, so their ratio is noise, not a finding.
        print("auto-depth write / grid-best write: no change (both chose queue_depth %d; medians %.1f and %.1f "
              "MiB/s)" % (rows[1][1][2], rows[1][1][0], rows[2][1][0]))
        return cheap
    share = rows[1][1][0] / rows[2][1][0]
    tuned = [r["throughput_gib_s"] for r in res["tuned"]]
    grid_bw = [r["throughput_gib_s"] for r in res["grid_write"]]
    print("auto-depth write / grid-best write %.3f (%.3f..%.3f from the runs' extremes; want >= %.2f)" % (
        share, min(tuned) / max(grid_bw), max(tuned) / min(grid_bw), GRID_SHARE))
    return share >= GRID_SHARE and cheap


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("-i", "--inventory", help="an existing lab inventory (default: boot one node)")
    parser.add_argument("--host", default="node1", help="the lab node to measure (default node1)")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--total-size", default="256M")
    parser.add_argument("--drive-model", default="knee8",
                        help="the data drives' model when booting a node (lab/nvmelab.py models; default knee8)")
    args = parser.parse_args()
    extra = {"bench_host": args.host, "bench_ranks": args.ranks, "bench_total_size": args.total_size}
    sys.exit(0 if run_bench(args, "bookworm", "checkpoint_depth.yml", extra, report) else 1)


if __name__ == "__main__":
    main()
