"""checkpoint_io_facts says what the node's real /sys, /proc and nvme-cli say (read directly by `node`)."""
from conftest import DATA_SERIALS, OS_SERIAL, QUEUE_KEYS, active_scheduler


def by_name(items):
    return dict((item["name"], item) for item in items)


def test_facts_are_read_only_and_complete(facts):
    assert facts["schema_version"] == 1
    for section in ("nvme", "block", "thermal", "io_uring", "xfs", "gds", "deepspeed"):
        assert section in facts, section
    assert facts["nvme"]["errors"] == []
    assert facts["block"]["errors"] == []
    assert facts["thermal"]["errors"] == []


def test_controllers_match_sysfs(facts, node):
    ctrls = by_name(facts["nvme"]["controllers"])
    assert set(ctrls) == set(node["controllers"])
    for name, real in node["controllers"].items():
        fact = ctrls[name]
        assert fact["serial"] == real["serial"]
        assert fact["model"] == real["model"]
        assert fact["firmware"] == real["firmware_rev"]
        assert fact["transport"] == real["transport"] == "pcie"
        assert fact["pci_address"] == real["address"]
        assert fact["io_queues"] == int(real["queue_count"]) - 1
        assert fact["current_link_width"] == int(real["current_link_width"])


def test_queue_counts_match_nvme_get_feature(facts, by_serial):
    """The lab starts data drives with max_ioqpairs=8: get-feature 7 reports 8 SQs and 8 CQs."""
    ctrls = by_name(facts["nvme"]["controllers"])
    for serial in DATA_SERIALS:
        name, real = by_serial[serial]
        raw = int(real["get_feature_7"].rsplit(":", 1)[-1].strip(), 16)
        assert ctrls[name]["io_queues_feature_sq"] == (raw & 0xFFFF) + 1 == 8
        assert ctrls[name]["io_queues_feature_cq"] == (raw >> 16) + 1 == 8


def test_mdts_matches_id_ctrl(facts, node):
    ctrls = by_name(facts["nvme"]["controllers"])
    for name, real in node["controllers"].items():
        assert ctrls[name]["mdts_bytes"] == (1 << int(real["id_ctrl"]["mdts"])) * 4096


def test_namespaces_flag_the_os_drive(facts, by_serial):
    namespaces = by_name(facts["nvme"]["namespaces"])
    (os_ns,) = by_serial[OS_SERIAL][1]["namespaces"]
    assert namespaces[os_ns]["is_os_drive"] is True
    assert "/boot" in namespaces[os_ns]["mount_points"]
    assert namespaces[os_ns]["in_use_reason"]
    for serial in DATA_SERIALS:
        for ns, real in by_serial[serial][1]["namespaces"].items():
            assert namespaces[ns]["is_os_drive"] is False
            assert namespaces[ns]["holders"] == real["holders"]
            assert namespaces[ns]["size_bytes"] == int(real["size"]) * 512


def test_block_queues_match_sysfs(facts, node):
    devices = by_name(facts["block"]["devices"])
    for ctrl in node["controllers"].values():
        for ns, real in ctrl["namespaces"].items():
            fact = devices[ns]
            assert fact["scheduler"] == active_scheduler(real["queue"]["scheduler"])
            for key in QUEUE_KEYS[1:]:
                assert fact[key] == int(real["queue"][key]), (ns, key)
            assert fact["hw_contexts"] == real["hw_contexts"]
    assert facts["block"]["nvme_io_queue_depth_param"] == int(node["nvme_io_queue_depth"])


def test_temperatures_match_hwmon_and_smart_log(facts, node):
    thermal = by_name(facts["thermal"]["controllers"])
    for name, real in node["controllers"].items():
        fact = thermal[name]
        assert abs(fact["composite_temp_c"] - int(real["hwmon_temp1_input"]) / 1000.0) < 2
        assert fact["smart_log_temp_c"] == int(real["smart_log"]["temperature"]) - 273
        assert fact["critical_warning"] == int(real["smart_log"]["critical_warning"]) == 0
        assert fact["wctemp_c"] == int(real["id_ctrl"]["wctemp"]) - 273
        assert fact["cctemp_c"] == int(real["id_ctrl"]["cctemp"]) - 273
        assert fact["throttled"] is False


def test_io_uring_matches_kernel(facts, node):
    uring = facts["io_uring"]
    assert uring["kernel_release"] == node["uname_r"]
    if node["io_uring_disabled"] is None:
        assert uring["io_uring_disabled"] is None
    else:
        assert uring["io_uring_disabled"] == int(node["io_uring_disabled"])
    assert uring["allowed_for_user"] is True
    assert uring["fio_io_uring_works"] is True, uring.get("fio_probe_error")


def test_gds_is_unavailable_without_gpu(facts):
    assert facts["gds"]["path"] == "unavailable"
    assert "GPU" in facts["gds"]["path_reason"]
