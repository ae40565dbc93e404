"""After converge (and idempotence): io_uring is usable for the training user, and only for it; the profile
holds NUMA-local CPUs and fio's achieved depth."""
import json

from labplay import record_data

from conftest import (DATA_SERIALS, GROUP, LIMITS_FILE, MEMLOCK_KIB, PROFILE_FILE, RECORD_FILE, SYSCTL_FILE,
                      TARGET_DEPTH, TRAINING_USER, OUTSIDER, expand_cpulist)


def test_sysctl_values_are_live(node):
    assert node["group"] is not None
    assert int(node["io_uring_disabled"]) == 1
    assert int(node["io_uring_group"]) == node["group"]["gid"]


def test_sysctl_values_persist_in_sysctl_d(node):
    text = node["files"][SYSCTL_FILE]
    assert "kernel.io_uring_group=%d" % node["group"]["gid"] in text.replace(" ", "")
    assert "kernel.io_uring_disabled=1" in text.replace(" ", "")
    assert node["modes"][SYSCTL_FILE] == "0o644"


def test_training_user_is_in_the_group_and_the_outsider_is_not(node):
    assert GROUP in node[TRAINING_USER]["groups"]
    assert GROUP not in node[OUTSIDER]["groups"]


def test_pam_limits_gives_the_training_user_its_memlock(node):
    # memlock auto: the bound of the profile (MEMLOCK_KIB), not unlimited, with the arithmetic in a comment
    lines = [line.split() for line in node["files"][LIMITS_FILE].splitlines() if line and not line.startswith("#")]
    assert lines == [[TRAINING_USER, "soft", "memlock", MEMLOCK_KIB], [TRAINING_USER, "hard", "memlock", MEMLOCK_KIB]]
    assert "8 ranks x queue depth 8 x block 1048576 B + 2 drives x depth 16" in node["files"][LIMITS_FILE]
    assert "unlimited" not in node["files"][LIMITS_FILE]
    assert node["modes"][LIMITS_FILE] == "0o644"
    # su - opens a PAM session: this is the limit a training job started by the user really gets
    assert node[TRAINING_USER]["ulimit_l"]["out"].strip() == MEMLOCK_KIB
    assert node[OUTSIDER]["ulimit_l"]["out"].strip() != MEMLOCK_KIB


def test_io_uring_works_for_the_training_user_and_is_refused_to_others(node):
    trainer = node[TRAINING_USER]["fio"]
    assert trainer["rc"] == 0 and trainer["job_error"] == 0, trainer
    assert trainer["io_bytes"] == 1024 * 1024, trainer
    outsider = node[OUTSIDER]["fio"]
    # io_uring_setup() fails with EPERM for a user outside kernel.io_uring_group when io_uring_disabled=1
    assert outsider["rc"] != 0 and outsider["job_error"] == 1, outsider
    assert "Operation not permitted" in outsider["messages"], outsider


def test_profile_cpus_are_local_to_each_drive_controller(node):
    assert node["modes"][PROFILE_FILE] == "0o644"
    profile = json.loads(node["files"][PROFILE_FILE])
    assert profile["schema_version"] == 1
    assert profile["training_user"] == TRAINING_USER
    assert profile["target_depth"] == TARGET_DEPTH
    by_serial = dict((ctrl["serial"], ctrl) for ctrl in node["controllers"].values())
    assert sorted(drive["serial"] for drive in profile["drives"]) == sorted(DATA_SERIALS)
    for drive in profile["drives"]:
        ctrl = by_serial[drive["serial"]]
        local = expand_cpulist(ctrl["local_cpulist"])
        assert drive["name"] in ctrl["namespaces"]
        assert drive["local_cpus"] == local and drive["local_cpulist"] == ctrl["local_cpulist"]
        assert drive["numa_node"] == (None if int(ctrl["numa_node"]) < 0 else int(ctrl["numa_node"]))
        assert drive["submit_cpus"] and set(drive["submit_cpus"]) <= set(local)
        assert drive["sqpoll"] is True and drive["sqthread_poll_cpu"] in local
        assert drive["fio_options"]["cpus_allowed"] == drive["submit_cpulist"]
        assert drive["fio_options"]["sqthread_poll_cpu"] == drive["sqthread_poll_cpu"]
        # the 256 MiB memlock covers 2 drives x 16 x 1 MiB
        assert drive["fixedbufs"] is True and drive["fio_options"]["fixedbufs"] == 1
        assert drive["registerfiles"] is True and drive["fio_options"]["hipri"] == 0
        assert drive["iodepth"] == TARGET_DEPTH and drive["block_size_bytes"] == 1024 * 1024


def test_fio_achieved_depth_was_reported(node):
    profile = json.loads(node["files"][PROFILE_FILE])
    assert profile["verify"]["ran"] is True and profile["verify"]["passed"] is True
    assert profile["verify"]["mode"] == "read"
    for drive in profile["drives"]:
        result = drive["verify"]
        assert result["target_depth"] == TARGET_DEPTH
        assert result["achieved_depth"] >= TARGET_DEPTH and result["reached"] is True
        assert result["rw"] == "read" and result["filename"] == "/dev/" + drive["name"]
        assert result["bw_bytes"] > 0 and result["clat_p99_ns"] > 0 and result["error"] is None
        print("%s: depth %s/%s (%.1f%% of I/Os), %.1f MiB/s, p99 %.1f ms, drive queue %s (cap %s)" % (
            drive["name"], result["achieved_depth"], result["target_depth"], result["achieved_depth_share_pct"],
            result["bw_bytes"] / 1048576.0, result["clat_p99_ns"] / 1e6, result["device_avg_queue"],
            result["drive_depth_cap"]))


def test_record_holds_the_values_found_before_the_first_change(node):
    record = record_data(node["files"][RECORD_FILE], "io_uring_engine")
    # a fresh trixie node: io_uring allowed for everyone, no group; the training user not yet in the group
    assert record["schema_version"] == 2
    assert record["sysctl"] == {"io_uring_disabled": 0, "io_uring_group": -1}
    assert record["group_additions"] == [{"user": TRAINING_USER, "group": GROUP}]
    assert record["memlock_before"]["soft_bytes"] is None  # trixie's limits.conf sets no memlock
    assert record["profile_dir_existed"] is False


def test_the_profile_says_what_the_role_did_about_memlock_and_the_group(node):
    profile = json.loads(node["files"][PROFILE_FILE])
    limit = profile["memlock"]["limit"]
    assert limit["manage"] == "write" and limit["soft"] == limit["hard"] == int(MEMLOCK_KIB) * 1024
    assert limit["need"]["need_bytes"] == (8 * 8 + 2 * 16) * 1024 * 1024
    shared = profile["io_uring"]["shared_group"]
    assert shared["group"] == GROUP and shared["others"] == [] and shared["warning"] is None
