"""The lab node is what the collection's tests claim: a real kernel with real (emulated) NVMe controllers."""
from conftest import DATA_SERIALS, OS_SERIAL


def test_node_has_os_and_data_controllers(by_serial):
    assert set(by_serial) == {OS_SERIAL} | set(DATA_SERIALS)
    for name, ctrl in by_serial.values():
        assert ctrl["transport"] == "pcie", name
        assert int(ctrl["queue_count"]) >= 2, name
        assert len(ctrl["namespaces"]) == 1, name


def test_the_os_drive_holds_boot(host, by_serial):
    """The OS NVMe drive holds /boot (the node's root is a virtio disk, so that its machine can be saved: an NVMe
    controller cannot be, on QEMU 7.2); /boot is an OS mount point the collection must leave alone, like /."""
    source = host.check_output("findmnt -n -o SOURCE /boot")
    (os_ns,) = by_serial[OS_SERIAL][1]["namespaces"]
    assert source == "/dev/" + os_ns
    assert "/boot" in host.file("/etc/fstab").content_string  # mounted again after a reboot


def test_data_drive_queues_are_readable(by_serial):
    for serial in DATA_SERIALS:
        for ns, info in by_serial[serial][1]["namespaces"].items():
            queue = info["queue"]
            assert "[" in queue["scheduler"], ns
            assert int(queue["nr_requests"]) >= 4, ns
            assert int(queue["max_sectors_kb"]) <= int(queue["max_hw_sectors_kb"]), ns


def test_playbook_tuned_only_the_data_drives(host, by_serial):
    """block_layer's defaults (scheduler none, read-ahead 1M) on the data drives; the OS drive untouched."""
    for serial in DATA_SERIALS:
        for ns, info in by_serial[serial][1]["namespaces"].items():
            assert info["queue"]["read_ahead_kb"] == "1024", ns
            assert "[none]" in info["queue"]["scheduler"], ns
    for ns, info in by_serial[OS_SERIAL][1]["namespaces"].items():
        assert info["queue"]["read_ahead_kb"] == "128", ns
    profile = host.file("/etc/ai_storage_checkpoint_io/engine_profile.json")
    assert profile.exists
    for serial in DATA_SERIALS:
        assert serial in profile.content_string
    assert OS_SERIAL not in profile.content_string
