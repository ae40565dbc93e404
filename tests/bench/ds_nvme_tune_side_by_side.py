"""DeepSpeed's own tuner (ds_nvme_tune) and the collection's depth search, side by side on one lab node's volume,
judged by DeepSpeed's own checkpoint writer. One node, one run.

Boots a node of the bookworm-deepspeed image (CPU torch and DeepSpeed in /opt/train-venv) whose two data drives
follow a drive model (``--drive-model``, default knee16: a known knee), builds the checkpoint volume (xfs role:
RAID0) and, on that volume (tests/bench/ds_nvme_tune_side_by_side.yml):
  * the collection's depth search (queue_depth_sweep, auto) and ds_nvme_tune over a reduced grid (printed: its
    default grid is 128 ds_io runs, about an hour and a half on a TCG node), each tuner's bytes written and seconds;
  * DeepSpeed's FastFileWriter saving the checkpoint (``--total-size``, ``--ranks``) with DeepSpeed's defaults,
    with ds_nvme_tune's recommendation and with the collection's settings (the sweep's depth, the request size and
    writer buffer of the deepspeed_config role's plan), interleaved over 5 rounds, each read back: medians, spreads, ratios with
    their ranges from the runs' extremes, against the drive model's ceiling.
Prints the table (docs/deepspeed-fastpersist.md keeps it with this command); exit status 1 when the collection's
settings / ds_nvme_tune's is below 0.98, 2 when something failed.

    python3 tests/bench/ds_nvme_tune_side_by_side.py [-i .lab/x/inventory.yml] [--drive-model knee16]
                                                     [--ranks 1] [--total-size 512M]
"""
import argparse
import json
import statistics
import subprocess
import sys

from bench_lab import run_bench

WANT = 0.98
SIDES = ("defaults", "ds_nvme_tune", "collection")


def side(saves, name, key):
    """[GiB/s] of one side's saves (``key`` throughput_gib_s) or of their restore reads (``key`` restore)."""
    values = []
    for item, result in saves:
        if item[1] != name:
            continue
        values.append(result["restore"]["throughput_gib_s"] if key == "restore" else result["throughput_gib_s"])
    return values


def summary(values):
    med = statistics.median(values)
    return med, (max(values) - min(values)) / med if med else 0.0


def report(res):
    """Print the tables; True when the collection's / ds_nvme_tune's >= WANT."""
    saves = res["saves"]
    ceiling = sum(m.get("ceiling_mib_s") or 0 for m in res.get("models", {}).values()) / 1024.0 or None
    tune = res["tune_aio"]
    settings = {
        "defaults": "DeepSpeed's defaults (block 1M, depth 8, 64 MiB double buffer)",
        "ds_nvme_tune": "its recommendation: %s" % json.dumps(tune, sort_keys=True),
        "collection": "depth %s, block %d MiB, writer %s" % (
            res["writer_plan"]["queue_depth"], res["writer_plan"]["block_size"] // 1048576,
            json.dumps(res["writer_plan"].get("section"), sort_keys=True)),
    }
    print("%-14s %9s %7s %9s %7s %9s %s" % ("DeepSpeed save", "GiB/s", "spread", "restore", "spread",
                                            "/ceiling", "settings"))
    write = {}
    for name in SIDES:
        write[name] = side(saves, name, "throughput_gib_s")
        med, spread = summary(write[name])
        rmed, rspread = summary(side(saves, name, "restore"))
        print("%-14s %9.4f %6.0f%% %9.4f %6.0f%% %9s %s" % (
            name, med, spread * 100, rmed, rspread * 100, "%.3f" % (med / ceiling) if ceiling else "-",
            settings[name]))
    if ceiling:
        print("%-14s %9.4f   (the drive model's ceiling, both drives)" % ("ceiling", ceiling))
    for a, b in (("collection", "ds_nvme_tune"), ("collection", "defaults"), ("ds_nvme_tune", "defaults")):
        ratio = statistics.median(write[a]) / statistics.median(write[b])
        print("%s / %s: %.3f (%.3f..%.3f from the runs' extremes)" % (
            a, b, ratio, min(write[a]) / max(write[b]), max(write[a]) / min(write[b])))
    sweep, cost = res["sweep"], res["tune_cost"]
    print("%-14s %12s %10s" % ("tuner", "MiB written", "seconds"))
    print("%-14s %12.1f %10.1f   (queue_depth_sweep auto: %s depths, stopped early %s)" % (
        "collection", sweep["bytes_written"] / 1048576.0, sweep["seconds"], sweep.get("points"),
        sweep.get("stopped_early")))
    print("%-14s %12.1f %10.1f   (ds_nvme_tune, the grid in ds_nvme_tune_side_by_side.yml; rc %s)" % (
        "ds_nvme_tune", cost["bytes_written"] / 1048576.0, cost["seconds"], cost["rc"]))
    print("collection / ds_nvme_tune: bytes %.3f, seconds %.3f" % (
        sweep["bytes_written"] / float(cost["bytes_written"] or 1), sweep["seconds"] / float(cost["seconds"] or 1)))
    grid = res.get("tune_grid") or {}
    configs = 1
    for values in grid.values():
        configs *= len(values)
    full = res.get("tune_default_configs")
    if grid and full:  # its default grid, at the measured cost of a configuration of the reduced one
        print("ds_nvme_tune's default grid (%d configurations; %d run here): about %.0f MiB, %.0f s; collection / "
              "that: bytes %.3f, seconds %.3f" % (
                  full, configs, cost["bytes_written"] / 1048576.0 * full / configs, cost["seconds"] * full / configs,
                  sweep["bytes_written"] * configs / float(full * (cost["bytes_written"] or 1)),
                  sweep["seconds"] * configs / float(full * (cost["seconds"] or 1))))
    share = statistics.median(write["collection"]) / statistics.median(write["ds_nvme_tune"])
    print("collection's settings / ds_nvme_tune's: %.3f (want >= %.2f)" % (share, WANT))
    return share >= WANT


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("-i", "--inventory", help="an existing lab inventory of the bookworm-deepspeed image")
    parser.add_argument("--host", default="node1")
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--total-size", default="512M")
    parser.add_argument("--drive-model", default="knee16")
    args = parser.parse_args()
    extra = {"bench_host": args.host, "bench_ranks": args.ranks, "bench_total_size": args.total_size}
    try:
        ok = run_bench(args, "bookworm-deepspeed", "ds_nvme_tune_side_by_side.yml", extra, report)
    except subprocess.CalledProcessError as exc:
        print("ds_nvme_tune_side_by_side: %s" % exc)
        sys.exit(2)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
