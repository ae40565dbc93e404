"""Refusals and revert, driven from the controller with ansible-playbook against the scenario's inventory.

The tests run in file order and build on each other: bad input refused with nothing changed -> revert (unmount,
fstab line gone, array stopped, data kept) -> revert again changes nothing -> present brings the same volume
back -> revert -> a filesystem made on a member is refused, naming the device and the signature -> revert with
force (naming both members by serial) erases only the role's own signatures -> the baseline of
tune_checkpoint_nodes.yml leaves a drive that holds data without a signature alone unless xfs_force names it.
"""
import json

from labplay import record_data

from xfs_node import (
    CHECKPOINT_DIR,
    MOUNT_POINT,
    data_names,
    fstab_lines,
    mount_entry,
    playbook,
    read_node,
    tune_playbook,
)

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.md import parse_mdstat
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.wipefs import parse_wipefs_json


def snapshot(state):
    """What a refused run must leave exactly as it was."""
    return {key: state[key] for key in ("mdstat", "mounts", "fstab", "mdadm_conf", "record", "md_kernel")}


def signatures(state):
    """{data drive: [signature types]} (the OS drive is left out)."""
    names = data_names(state)
    by_device = {}
    for sig in parse_wipefs_json(state["wipefs"]["stdout"]):
        if sig["device"] in names:
            by_device.setdefault(sig["device"], []).append(sig["type"])
    return by_device


def test_bad_input_is_refused_before_any_change(host):
    before = read_node(host)
    member = "/dev/" + before["drives"]["DATA0002"]["name"]
    # the settings alone are refused before anything is read from the node, every one in one message
    rc, out, dummy = playbook("xfs_chunk=1X", "xfs_agcount=0", "xfs_mount_point=mnt/ckpt",
                              "xfs_checkpoint_dir_mode=0777")
    assert rc != 0
    assert "xfs_chunk: '1X' is not a size" in out
    assert "xfs_agcount: 0 is below the minimum 2 (mkfs.xfs needs at least two superblocks)" in out
    assert "xfs_mount_point: 'mnt/ckpt' is not an absolute path" in out
    assert "xfs_checkpoint_dir_mode: '0777' lets every user of the node write the checkpoint directory" in out
    assert "nothing was changed" in out
    # what needs the drives, once they are known
    rc, out, dummy = playbook("xfs_log_device=" + member)
    assert rc != 0 and "xfs_log_device: %s is one of the volume's members" % member in out
    assert "nothing was changed" in out
    rc, out, dummy = playbook("xfs_raid_level=raid5")
    assert rc != 0 and "xfs_raid_level must be one of: raid0, got: raid5" in out
    # A misspelt serial beside a real one: this role formats what it selects, so it stops, naming the selector.
    rc, out, dummy = playbook(json.dumps({"checkpoint_io_data_drives": {"serials": ["DATA0001", "NO_SUCH"]}}))
    assert rc != 0
    assert ("checkpoint_io_data_drives selectors without a drive on this node: serial NO_SUCH (this role formats "
            "the drives it selects: fix the selection). Nothing was changed.") in out
    assert snapshot(read_node(host)) == snapshot(before)


def test_revert_unmounts_and_removes_the_fstab_entry(host):
    rc, out, changed = playbook("xfs_state=absent")
    assert rc == 0 and changed and changed > 0
    state = read_node(host)
    assert mount_entry(state) is None
    assert fstab_lines(state) == []
    assert state["md_kernel"] is None and parse_mdstat(state["mdstat"]) == {}
    assert "ARRAY /dev/md/ckpt" not in state["mdadm_conf"]
    record = record_data(state["record"], "xfs")
    assert record["state"] == "reverted"  # kept: the data is still on the drives
    # without xfs_force the role's md superblocks stay on both members
    assert sorted(signatures(state).values()) == [["linux_raid_member"], ["linux_raid_member"]]


def test_a_second_revert_changes_nothing(host):
    rc, out, changed = playbook("xfs_state=absent")
    assert rc == 0 and changed == 0, out[-3000:]


def test_present_after_a_revert_brings_the_same_volume_back(host):
    rc, out, changed = playbook()
    assert rc == 0 and changed and changed > 0
    state = read_node(host)
    assert mount_entry(state) is not None and len(fstab_lines(state)) == 1
    marker = host.run("cat %s/marker" % CHECKPOINT_DIR)
    assert marker.rc == 0 and marker.stdout.strip() == "step-100", "the data did not survive the revert"


def test_a_drive_with_a_filesystem_is_refused_naming_device_and_signature(host):
    rc, out, dummy = playbook("xfs_state=absent")
    assert rc == 0
    state = read_node(host)
    device = "/dev/" + state["drives"]["DATA0001"]["name"]
    made = host.run("mkfs.ext4 -q -F %s" % device)
    assert made.rc == 0, made.stderr
    before = read_node(host)
    rc, out, dummy = playbook()
    assert rc != 0
    assert "Refusing to build the checkpoint volume on node1: %s (DATA0001) carries ext4 signature" % device in out
    assert ("Nothing was changed. To erase these signatures and everything the devices hold, name the drives in "
            "xfs_force by serial or WWID: xfs_force: [DATA0001].") in out
    # a force that names the other drive (or is the old bare true) does not cover DATA0001
    rc, out, dummy = playbook("xfs_force=DATA0002")
    assert rc != 0 and "%s (DATA0001) carries ext4 signature" % device in out
    rc, out, dummy = playbook("xfs_force=true")
    assert rc != 0 and "xfs_force: 'true' is no longer accepted: name the drives that may be overwritten" in out
    after = read_node(host)
    assert snapshot(after) == snapshot(before)
    assert mount_entry(after) is None and after["md_kernel"] is None


def test_revert_with_force_erases_only_the_roles_signatures(host):
    rc, out, dummy = playbook("xfs_state=absent", "xfs_force=DATA0001")
    assert rc != 0 and "xfs_force names only some members of the recorded volume (not serial DATA0002" in out
    rc, out, changed = playbook("xfs_state=absent", "xfs_force=DATA0001,DATA0002")
    assert rc == 0 and changed and changed > 0
    state = read_node(host)
    found = signatures(state)
    data1 = state["drives"]["DATA0001"]["name"]
    assert found == {data1: ["ext4"]}, found  # the foreign ext4 stays, the role's md superblock is gone
    assert state["record"] is None
    assert mount_entry(state, MOUNT_POINT) is None and fstab_lines(state) == []


PATTERN_OFFSETS_MIB = (0, 100, 1000)
PLANT = "for off in %s; do dd if=/dev/urandom of={dev} bs=1M count=1 seek=$off oflag=direct conv=notrunc status=none; " \
        "done; sync" % " ".join(map(str, PATTERN_OFFSETS_MIB))
READ_BACK = "for off in %s; do dd if={dev} bs=1M count=1 skip=$off iflag=direct status=none; done | sha256sum" \
            % " ".join(map(str, PATTERN_OFFSETS_MIB))
STATE_DIR = "/var/lib/ai_storage_checkpoint_io"


def test_the_raw_baseline_leaves_data_without_a_signature_alone_unless_forced(host):
    """Issue 31, finding 7: the baseline wrote the data drives raw before the xfs role formatted them, guarded by
    wipefs only - data without a signature (plain dm-crypt, raw application data, an array member whose superblock
    was zeroed: DATA0002 here, the role's md superblock erased above, its XFS stripes still on it) was overwritten.
    Now a drive is written raw only when xfs_force names it: DATA0002 carries a random pattern and no signature, is
    selected with the volume on, and its bytes are the same after the baseline ran."""
    state = read_node(host)
    dev = "/dev/" + state["drives"]["DATA0002"]["name"]
    host.check_output(PLANT.format(dev=dev))
    assert dev not in signatures(read_node(host)), "the planted pattern reads as a signature"
    pattern = host.check_output(READ_BACK.format(dev=dev))
    extra = json.dumps({"checkpoint_io_data_drives": {"serials": ["DATA0002"]}, "checkpoint_io_xfs": True,
                        "checkpoint_io_verify_total_size": "64M", "checkpoint_io_verify_repeats": 1})
    try:
        rc, out, recap = tune_playbook("--tags", "baseline", "-e", extra)
        assert rc == 0, out[-3000:]
        assert ("no baseline: the data drives the xfs role is to format are written raw only where xfs_force names "
                "them (not named: DATA0002 (%s))" % dev[5:]) in out
        assert host.check_output(READ_BACK.format(dev=dev)) == pattern  # not one byte written
        record = record_data(host.file(STATE_DIR + "/baseline.json").content_string, "baseline")
        assert record["where"] == "none" and "not named: DATA0002" in record["reason"]
    finally:
        host.run("rm -f %s/baseline.json %s/settings_before.json" % (STATE_DIR, STATE_DIR))
