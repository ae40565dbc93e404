# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What lab/demo.sh's verification reported, checked against the drive model the lab put behind the drives.

For each node of the inventory: the verification's JSON (reports/verify/<node>.json) and the drive models of its
data drives (checkpoint_io_lab_drive_models, written by lab/nvmelab.py). The array's knee is the drives' knees
added up (RAID0 of identical drives), its ceiling the drives' ceilings added up.

Profile ``starved``: after/before >= 1.5; after/ceiling >= 0.9 against the model's ceiling, the known one (the
verification's own after/ceiling, against the depth sweep's best, is printed beside it: on the lab's drive models
the sweep's best reads above the model's ceiling - 1.06 and 1.10 x in the two knee16 runs of 2026-12-01 - since
the rate filter's bucket refills while the queue drains between a run's ramp and its measured writes, more the
deeper the queue, and the best of noisy medians is the highest of them); the auto depth (per rank x ranks)
within one step (a factor of 2) of the array's knee.

Profile ``saturated``: after/before within the spread of 1.0 (the ratio's range from the runs' extremes holds
1.0, or the verdict is "within noise") and p99 latency lower after.

``--engine deepspeed`` (LAB_DEMO_ENGINE=deepspeed): the report says DeepSpeed's FastPersist writer wrote both sides
and the restore read is reported before and after; the starved profile's after/ceiling bound is then 0.8 (issue 33:
DeepSpeed's own save goes one request at a time, as its file grows, and carries torch.save's serialisation and the
writer's buffer copies, which fio has not); DeepSpeed reports no p99, so the saturated profile's p99 check is fio's
only.
Prints every figure; exit status 1 when a check fails.
"""

import argparse
import json
import math
import os
import sys

import yaml

MIB = 1024 * 1024
GIB = 1024 ** 3


def nodes(inventory):
    with open(inventory) as handle:
        doc = yaml.safe_load(handle)
    return doc["all"]["children"]["checkpoint_nodes"]["hosts"]


def check(profile, name, host, report, engine="fio"):
    models = list((host.get("checkpoint_io_lab_drive_models") or {}).values())
    if not models:
        return ["%s: no drive models in the inventory (plain drives): nothing to check against" % name]
    knee = sum(m["knee_depth"] for m in models)
    ceiling_gib = sum(m["ceiling_mib_s"] for m in models) * MIB / GIB
    after = report["after"]["throughput_gib_s"]
    before = report["before"]["throughput_gib_s"]
    # the depth the sweep chose, in its block (the aio section's block may be a save's request size: then its
    # depth is that request count, planned_depth the sweep's)
    planned = report["after"]["settings"].get("planned_depth") or {}
    per_rank = int(planned["per_rank"]) * int(planned["block_size"]) // MIB if planned else \
        int(report["after"]["settings"]["queue_depth"])
    depth = per_rank * int(report["ranks"])
    failures = []
    print("%s (%s, %d drives %s): before %.4f GiB/s (%d runs, spread %.1f%%; %s)" % (
        name, profile, len(models), models[0]["profile"], before["median"], before["n"], before["spread"] * 100,
        report["before"]["what"]))
    print("  after %.4f GiB/s (%d runs, spread %.1f%%), verdict %s, after/before %s (%s..%s), noise %.1f%%" % (
        after["median"], after["n"], after["spread"] * 100, report["verdict"], report["ratio"], report["ratio_low"],
        report["ratio_high"], report["noise"] * 100))
    print("  p99 before %s ms, after %s ms, p99 after/before %s" % (
        round(report["before"]["p99_ns"]["median"] / 1e6, 1) if report["before"]["p99_ns"] else None,
        round(report["after"]["p99_ns"]["median"] / 1e6, 1) if report["after"]["p99_ns"] else None,
        report["p99_ratio"]))
    model_fraction = after["median"] / ceiling_gib
    print("  ceiling: the model's %.4f GiB/s (after/ceiling %.3f, checked); the sweep's best %s GiB/s (after/ceiling "
          "%s%s)" % (ceiling_gib, model_fraction, report["ceiling_gib_s"], report["after_ceiling"],
                     ", %.2f x the model's ceiling" % (report["ceiling_gib_s"] / ceiling_gib)
                     if report["ceiling_gib_s"] else ""))
    print("  auto depth %d per rank x %d ranks = %d in flight (1 MiB requests); the array's knee %d (Little's Law of "
          "the model); the aio section: depth %s, block %d MiB" % (
              per_rank, int(report["ranks"]), depth, knee, report["after"]["settings"]["queue_depth"],
              int(report["after"]["settings"]["block_size"]) // MIB))
    ran = (report.get("engine") or {}).get("engine", "fio")
    restore = report.get("restore") or {}
    print("  written by %s (%s); restore read before %s, after %s GiB/s (medians), after/before %s" % (
        ran, (report.get("engine") or {}).get("reason"), (restore.get("before") or {}).get("median"),
        (restore.get("after") or {}).get("median"), restore.get("ratio")))
    if ran != engine:
        failures.append("the checkpoints were written by %s, not %s" % (ran, engine))
    if engine == "deepspeed" and not (restore.get("before") and restore.get("after")):
        failures.append("the restore read is not reported before and after")
    bound = 0.8 if engine == "deepspeed" else 0.9
    if profile == "starved":
        if report["ratio"] is None or report["ratio"] < 1.5:
            failures.append("after/before %s is below 1.5" % report["ratio"])
        if model_fraction < bound:
            failures.append("after/ceiling (the model's) %.3f is below %s" % (model_fraction, bound))
        if abs(math.log2(depth) - math.log2(knee)) > 1:
            failures.append("auto depth %d in flight is more than one step from the knee %d" % (depth, knee))
    else:
        within = report["verdict"] == "within noise" or (
            report["ratio_low"] is not None and report["ratio_low"] <= 1.0 <= report["ratio_high"])
        if not within:
            failures.append("after/before %s (%s..%s) does not hold 1.0 within its spread" % (
                report["ratio"], report["ratio_low"], report["ratio_high"]))
        if engine == "fio" and (report["p99_ratio"] is None or report["p99_ratio"] >= 1):
            failures.append("p99 after/before %s is not below 1" % report["p99_ratio"])
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=["starved", "saturated"], required=True)
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--reports", required=True)
    parser.add_argument("--engine", choices=["fio", "deepspeed"], default="fio")
    args = parser.parse_args()
    failures = []
    for name, host in sorted(nodes(args.inventory).items()):
        path = os.path.join(args.reports, name + ".json")
        if not os.path.exists(path):
            failures.append("%s: no verification report %s" % (name, path))
            continue
        with open(path) as handle:
            report = json.load(handle)
        failures += ["%s: %s" % (name, f) for f in check(args.profile, name, host, report, args.engine)]
    for failure in failures:
        print("FAIL " + failure)
    print("demo check (%s): %s" % (args.profile, "FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
