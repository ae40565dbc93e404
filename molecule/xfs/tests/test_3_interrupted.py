"""A run killed right after any step of the destructive sequence is finished by the next run, without xfs_force,
and a further run changes nothing; or it is undone by xfs_state absent.

Each case starts from blank data drives and no record (a first run), runs converge.yml and SIGKILLs the whole
ansible-playbook run (controller, workers, connections: callback_plugins/kill_after.py) the moment the named
step has succeeded, checks that the node is as that step left it, then runs again without xfs_force.

Before issue 12 the kill after "Create or assemble the md RAID0 array" stranded the node (the next run refused
both members: "has holders (md127)") and the kill after "Make the XFS filesystem" too (the next run called the
role's own XFS foreign and asked for xfs_force): the array's and the filesystem's UUIDs are now chosen and recorded
before mdadm and mkfs.xfs make them.
"""
import pytest

from labplay import record_data

from xfs_node import (
    data_names,
    fstab_lines,
    killed_playbook,
    mount_entry,
    playbook,
    read_node,
    wipe_volume,
)

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.md import parse_mdstat
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.wipefs import norm_uuid, parse_wipefs_json


def export(result):
    """KEY=value lines of blkid/mdadm --export (None or a failed run: {})."""
    if not result or result["rc"] != 0:
        return {}
    return dict(line.split("=", 1) for line in result["stdout"].splitlines() if "=" in line)


def record_of(state):
    return record_data(state["record"], "xfs") if state["record"] else None


def data_signatures(state):
    names = data_names(state)
    return [sig for sig in parse_wipefs_json(state["wipefs"]["stdout"]) if sig["device"] in names]


# ---- what the node shows right after each step (the kill lands before the next task is sent)
def after_array_intent(state):
    record = record_of(state)
    assert record["state"] == "building" and record["intent"]["step"] == "creating-md"
    assert record["md"]["uuid"] and record["filesystem"] is None
    assert state["md_kernel"] is None and data_signatures(state) == []  # recorded, not made yet


def after_array(state):
    record = record_of(state)
    assert record["intent"]["step"] == "creating-md"
    assert norm_uuid(export(state["mdadm_detail"])["MD_UUID"]) == norm_uuid(record["md"]["uuid"])
    assert "TYPE" not in export(state["blkid"])  # no filesystem yet


def after_filesystem_intent(state):
    record = record_of(state)
    assert record["intent"]["step"] == "formatting" and record["filesystem"]["uuid"]
    assert "TYPE" not in export(state["blkid"])


def after_filesystem(state):
    record = record_of(state)
    assert record["intent"]["step"] == "formatting"
    blkid = export(state["blkid"])
    assert blkid["TYPE"] == "xfs" and blkid["UUID"] == record["filesystem"]["uuid"]
    assert mount_entry(state) is None and fstab_lines(state) == []


def after_record(state):
    record = record_of(state)
    assert record["state"] == "present" and "intent" not in record
    assert mount_entry(state) is None and fstab_lines(state) == []


def after_mount(state):
    assert mount_entry(state) is not None and len(fstab_lines(state)) == 1
    assert state["dir"] is None  # the checkpoint directory comes after


STEPS = [
    ("Record the array about to be made or assembled", after_array_intent),
    ("Create or assemble the md RAID0 array", after_array),
    ("Record the filesystem about to be made", after_filesystem_intent),
    ("Make the XFS filesystem", after_filesystem),
    ("Record the volume (the sequence is over", after_record),
    ("Mount the volume and keep it in fstab", after_mount),
]


def converged(state):
    """One array of exactly the two members, XFS with the recorded UUID on it, mounted, one fstab line by that
    UUID, the checkpoint directory, the record complete."""
    arrays = parse_mdstat(state["mdstat"])
    assert list(arrays) == [state["md_kernel"]], state["mdstat"]
    assert sorted(arrays[state["md_kernel"]]["members"]) == data_names(state)
    record = record_of(state)
    assert record["state"] == "present" and "intent" not in record
    assert norm_uuid(export(state["mdadm_detail"])["MD_UUID"]) == norm_uuid(record["md"]["uuid"])
    blkid = export(state["blkid"])
    assert blkid["TYPE"] == "xfs" and blkid["UUID"] == record["filesystem"]["uuid"]
    source, fstype, dummy = mount_entry(state)
    assert source == "/dev/" + state["md_kernel"] and fstype == "xfs"
    assert [line[0] for line in fstab_lines(state)] == ["UUID=" + record["filesystem"]["uuid"]]
    assert state["dir"] and state["dir"]["owner"] == "trainer"


@pytest.mark.parametrize("step, left", STEPS, ids=[step for step, dummy in STEPS])
def test_a_run_killed_after_the_step_is_finished_by_the_next_run_without_force(host, step, left):
    wipe_volume(host)
    rc, out = killed_playbook(step)
    assert rc == -9 and "KILLED AFTER: ai_storage.checkpoint_io.xfs : " + step in out, out[-3000:]
    left(read_node(host))
    rc, out, changed = playbook()
    assert rc == 0, out[-3000:]
    converged(read_node(host))
    rc, out, changed = playbook()
    assert rc == 0 and changed == 0, out[-3000:]


def test_a_run_killed_after_the_array_is_undone_by_absent_without_force(host):
    wipe_volume(host)
    rc, out = killed_playbook("Create or assemble the md RAID0 array")
    assert rc == -9
    made = read_node(host)
    rc, out, changed = playbook("xfs_state=absent")
    assert rc == 0 and changed and changed > 0, out[-3000:]
    state = read_node(host)
    assert state["md_kernel"] is None and parse_mdstat(state["mdstat"]) == {}
    assert record_of(state)["state"] == "reverted"
    assert [sig["type"] for sig in data_signatures(state)] == ["linux_raid_member"] * 2  # data kept
    rc, out, changed = playbook("xfs_state=absent", "xfs_force=DATA0001,DATA0002")
    assert rc == 0, out[-3000:]
    state = read_node(host)
    assert data_signatures(state) == [] and state["record"] is None
    assert made["md_kernel"] is not None
    rc, out, changed = playbook()  # and the volume can be made again from scratch
    assert rc == 0
    converged(read_node(host))
