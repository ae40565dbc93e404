"""After converge and a reboot: the RAID0, the XFS geometry, the mount options, fstab and the directory are what
the role was asked for - read from the node's own /proc/mdstat, xfs_info, /proc/mounts and /etc/fstab."""
from labplay import record_data

from xfs_node import CHECKPOINT_DIR, DATA_SERIALS, MOUNT_POINT, data_names, fstab_lines, mount_entry, playbook

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import xfs_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.md import parse_mdstat
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs import (
    mount_stripe_bytes,
    parse_mount_options,
    parse_xfs_info,
)

MIB = 1024 * 1024
OPTIONS = ["noatime", "inode64", "logbufs=8", "logbsize=256k", "largeio", "swalloc"]


def expected_plan(node):
    """What the role was asked: the plan made from the node's own drives and array size."""
    selected = []
    controllers = []
    for serial in DATA_SERIALS:
        drive = node["drives"][serial]
        selected.append({"name": drive["name"], "device": "/dev/" + drive["name"], "controller": serial,
                         "serial": serial, "size_bytes": drive["size"], "optimal_io_size": 512})
        controllers.append({"name": serial, "io_queues": drive["queue_count"] - 1})
    settings = {"chunk": "1M", "mount_point": MOUNT_POINT, "checkpoint_dir": CHECKPOINT_DIR, "label": "checkpoints",
                "mount_options": OPTIONS, "fstab_options": ["nofail"], "md_name": "ckpt"}
    return xfs_plan.plan_volume(selected, controllers, settings, target_size_bytes=node["md_size"])


def test_the_node_was_rebooted_after_converge(node):
    assert node["boot_id_before_reboot"], "side_effect did not record the boot id"
    assert node["boot_id"] != node["boot_id_before_reboot"]


def test_mdstat_raid0_of_both_data_drives_with_a_1m_chunk(node):
    arrays = parse_mdstat(node["mdstat"])
    assert node["md_kernel"] in arrays, node["mdstat"]
    array = arrays[node["md_kernel"]]
    assert array["state"] == "active" and array["level"] == "raid0"
    assert sorted(array["members"]) == data_names(node)
    assert array["chunk_bytes"] == 1024 * 1024  # "1024k chunks"
    for serial in DATA_SERIALS:
        assert node["drives"][serial]["holders"] == [node["md_kernel"]]


def test_xfs_info_geometry_is_what_was_asked(node):
    assert node["xfs_info"] and node["xfs_info"]["rc"] == 0, node["xfs_info"]
    info = parse_xfs_info(node["xfs_info"]["stdout"])
    assert info["errors"] == {}
    plan = expected_plan(node)
    assert plan["errors"] == []
    assert info["sunit_bytes"] == 1 * MIB
    assert info["swidth_bytes"] == 2 * MIB
    assert info["agcount"] == plan["agcount"]
    assert info["agsize_bytes"] == plan["agsize_bytes"]
    # the rule: one AG per NVMe I/O queue of each member (within XFS's bounds)
    queues = min(node["drives"][s]["queue_count"] - 1 for s in DATA_SERIALS)
    assert info["agcount"] == 2 * queues
    assert info["agsize_bytes"] % (2 * MIB) != 0, "every AG header would sit on the same member"
    assert info["log"]["internal"] is True
    assert info["features"]["crc"] is True


def test_proc_mounts_shows_the_asked_options_and_the_stripe(node):
    entry = mount_entry(node)
    assert entry, node["mounts"]
    source, fstype, options = entry
    assert fstype == "xfs" and source == "/dev/" + node["md_kernel"]
    parsed = parse_mount_options(options)
    for option in ("noatime", "inode64", "largeio", "swalloc"):
        assert parsed.get(option) is True, (option, options)
    assert parsed["logbufs"] == 8 and parsed["logbsize"] == "256k"
    assert mount_stripe_bytes(parsed) == {"sunit_bytes": 1 * MIB, "swidth_bytes": 2 * MIB}


def test_fstab_mounts_the_filesystem_by_uuid(node):
    blkid = dict(line.split("=", 1) for line in node["blkid"]["stdout"].splitlines() if "=" in line)
    assert blkid["TYPE"] == "xfs" and blkid["LABEL"] == "checkpoints"
    assert fstab_lines(node) == [["UUID=" + blkid["UUID"], MOUNT_POINT, "xfs", ",".join(OPTIONS + ["nofail"]),
                                  "0", "0"]]


def test_mdadm_conf_keeps_the_array_line(node):
    detail = dict(line.split("=", 1) for line in node["mdadm_detail"]["stdout"].splitlines() if "=" in line)
    lines = [line for line in node["mdadm_conf"].splitlines() if line.startswith("ARRAY")]
    assert lines == ["ARRAY /dev/md/ckpt metadata=1.2 UUID=%s name=%s" % (detail["MD_UUID"], detail["MD_NAME"])]


def test_the_checkpoint_directory_is_on_the_volume_and_owned_by_the_trainer(node, host):
    assert node["dir"] == {"owner": "trainer", "group": "trainer", "mode": "0750", "device": 9}  # 9 = md major
    write = host.run("runuser -u trainer -- sh -c 'echo step-100 > %s/marker && cat %s/marker'"
                     % (CHECKPOINT_DIR, CHECKPOINT_DIR))
    assert write.rc == 0 and write.stdout.strip() == "step-100", write.stderr


def test_the_record_names_what_the_role_made(node):
    record = record_data(node["record"], "xfs")
    detail = dict(line.split("=", 1) for line in node["mdadm_detail"]["stdout"].splitlines() if "=" in line)
    blkid = dict(line.split("=", 1) for line in node["blkid"]["stdout"].splitlines() if "=" in line)
    assert record["state"] == "present" and record["mount_point"] == MOUNT_POINT
    assert record["md"]["uuid"] == detail["MD_UUID"] and record["md"]["chunk_bytes"] == MIB
    assert record["filesystem"]["uuid"] == blkid["UUID"] and record["filesystem"]["device"] == "/dev/md/ckpt"
    assert sorted(m["serial"] for m in record["members"]) == list(DATA_SERIALS)


def test_a_link_planted_below_a_directory_the_user_owns_is_refused_and_etc_untouched(host):
    """Issue 31, finding 1: with the checkpoint directory two levels below the mount point, the directory in between
    belonged to the training user (ansible.builtin.file gave it the last one's owner); the user replaced the last
    one with a link to /etc and the next run chowned and chmodded /etc to the user. Now a directory on the way that
    is not root's is refused by name, nothing is followed, /etc and the user's link stay as they were."""
    etc = "stat -c '%u:%g %a' /etc"
    etc_before = host.run(etc).stdout
    # what the role left before the fix: the directory on the way owned by the user, who plants the link
    made = host.run("install -d -o trainer -g trainer -m 0750 %s/team && runuser -u trainer -- ln -s /etc "
                    "%s/team/job" % (MOUNT_POINT, MOUNT_POINT))
    assert made.rc == 0, made.stderr
    try:
        rc, out, dummy = playbook("xfs_checkpoint_dir=%s/team/job" % MOUNT_POINT)
        assert rc != 0
        assert "%s/team belongs to uid" % MOUNT_POINT in out and "must be root's" in out, out[-2000:]
        assert host.run(etc).stdout == etc_before  # /etc is root's, 0755, as before
        assert host.run("readlink %s/team/job" % MOUNT_POINT).stdout.strip() == "/etc"  # the user's link kept
    finally:
        host.run("rm -rf %s/team" % MOUNT_POINT)
