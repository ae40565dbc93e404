"""One run converges (issue 32), read back after the scenario's two runs of tune_checkpoint_nodes.yml on a blank
node (Molecule's idempotence step has proven the second changed nothing, so what is read here is what the first
run left): the fabric namespace connected by the fabric step is in the plan, the volume and the block layer's
settings of that same run; the ds_config carries the sweep's depth lowered by the thermal back-off the validation
found when DATA0002 throttled mid-write; the GDS path proof ran on the checkpoint directory the xfs step made."""
import json
import os

from labplay import record_data

testinfra_hosts = ["ansible://node1"]
NQN = "nqn.2026-12.io.checkpoint-io.lab:target-data"
LOCAL = ["DATA0001", "DATA0002"]


def _record(node, name):
    return record_data(node["records"][name], name)


def _active(text):
    """'[none] mq-deadline' -> 'none'; a native-multipath head has no scheduler to choose: 'none'."""
    return ([word.strip("[]") for word in text.split() if word.startswith("[")] or [text.strip()])[0]


def _fabric(node):
    """The namespaces of the target's subsystem: {name: entry}."""
    return dict((name, ns) for name, ns in node["namespaces"].items() if ns["subsysnqn"] == NQN)


def test_the_target_s_two_namespaces_are_connected_over_tcp(node):
    fabric = _fabric(node)
    assert len(fabric) == 2 and set(ns["transport"] for ns in fabric.values()) == {"tcp"}, node["namespaces"]


def test_the_plan_selects_the_local_drives_and_the_fabric_namespaces(node, plan):
    assert plan["problems"] == [] and plan["check_mode"] is False
    selected = sorted(d["name"] for d in plan["drives"]["selected"])
    local = sorted(n for n, ns in node["namespaces"].items() if ns["serial"] in LOCAL)
    assert selected == sorted(local + list(_fabric(node))), (selected, local)


def test_the_volume_stripes_over_all_four_and_is_mounted(node, plan):
    arrays = dict((md, members) for md, members in node["md"].items() if members)
    assert len(arrays) == 1, node["md"]
    members = list(arrays.values())[0]
    assert sorted(members) == sorted(d["name"] for d in plan["drives"]["selected"])
    assert set(_fabric(node)) < set(members)
    mounts = [line.split() for line in node["mounts"].splitlines()]
    assert [m[2] for m in mounts if m[1] == plan["xfs"]["mount_point"]] == ["xfs"]


def test_every_selected_namespace_has_the_queue_values_of_the_plan(node, plan):
    drives = plan["block_layer"]["drives"]
    assert sorted(drives) == sorted(d["name"] for d in plan["drives"]["selected"])
    for name, part in drives.items():
        found = node["namespaces"][name]["queue"]
        for key, value in part["after"].items():
            got = _active(found[key]) if key == "scheduler" else int(found[key])
            assert got == value, (name, key, got, value)


def test_the_ds_config_carries_the_measured_depth_lowered_by_the_back_off(node, plan):
    thermal = _record(node, "thermal")
    backoff = thermal["backoff"]
    assert thermal["drives"]["DATA0002"]["verdict"] == "throttling", thermal
    assert backoff["apply"] is True and "DATA0002" in backoff["drives"], backoff
    depth = plan["queue_depth"]
    assert depth["policy"] == "auto" and depth["measured"] is not None, depth
    # the validation wrote at the sweep's depth and backed off from it
    assert thermal["queue_depth"] == backoff["from_depth"] == depth["measured"] > backoff["per_rank_depth"] >= 1
    aio = json.loads(node["ds_config"])["aio"]
    assert aio["queue_depth"] == backoff["per_rank_depth"] == depth["per_rank"], (aio, depth)


def test_the_verification_wrote_with_the_back_off(node):
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "reports", "verify", "node1.json")) as handle:
        report = json.load(handle)
    assert report["after"]["settings"]["queue_depth"] == _record(node, "thermal")["backoff"]["per_rank_depth"]


def test_each_play_gathers_the_facts_once_except_where_it_reads_back_what_it_changed():
    """The facts gathers of each play of the two runs (count_facts.py): one per play, the verification included (the
    drives' health after the writes comes from the last write's own samples); two only in the first run's xfs play,
    which reads back the volume it made (xfs_info, mounts, md). Printed for the log."""
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "facts_count.json")) as handle:
        runs = [run for run in json.load(handle) if run["plays"]][-2:]
    assert len(runs) == 2, runs
    read_back = "Checkpoint filesystem (XFS, optional md RAID0)"
    for number, run in enumerate(runs, 1):
        for play, counts in run["plays"]:
            print("run %d: %s: %s" % (number, play, counts))
            assert set(counts) == {"node1"}, (play, counts)
            assert counts["node1"] <= (2 if (play == read_back and number == 1) else 1), (number, play, counts)
