"""The lab node is what the collection's tests claim: a real kernel with real (emulated) NVMe controllers."""
from conftest import DATA_SERIALS, OS_SERIAL, controllers, namespace_of, sysfs


def test_node_has_os_and_data_controllers(host):
    ctrls = controllers(host)
    assert set(ctrls) == {OS_SERIAL} | set(DATA_SERIALS)
    for name in ctrls.values():
        assert sysfs(host, "/sys/class/nvme/%s/transport" % name) == "pcie"
        assert int(sysfs(host, "/sys/class/nvme/%s/queue_count" % name)) >= 2


def test_root_is_on_the_os_drive(host):
    ctrl = controllers(host)[OS_SERIAL]
    source = host.check_output("findmnt -n -o SOURCE /")
    assert source.startswith("/dev/%s" % namespace_of(host, ctrl))


def test_data_drives_are_unused(host):
    for serial in DATA_SERIALS:
        ns = namespace_of(host, controllers(host)[serial])
        assert host.check_output("ls /sys/block/%s/holders" % ns) == ""
        assert "/dev/%s" % ns not in host.file("/proc/mounts").content_string


def test_data_drive_queues_are_readable(host):
    for serial in DATA_SERIALS:
        queue = "/sys/block/%s/queue" % namespace_of(host, controllers(host)[serial])
        assert "[" in sysfs(host, queue + "/scheduler")
        assert int(sysfs(host, queue + "/nr_requests")) >= 4
        assert int(sysfs(host, queue + "/max_sectors_kb")) <= int(sysfs(host, queue + "/max_hw_sectors_kb"))
