"""Helpers shared by the testinfra tests: read the lab node's real /sys directly."""
import pytest

OS_SERIAL = "OS0001"
DATA_SERIALS = ("DATA0001", "DATA0002")


def sysfs(host, path):
    """The stripped content of one sysfs/procfs file on the node."""
    return host.file(path).content_string.strip()


def controllers(host):
    """{serial: controller name} for every NVMe controller of the node, read from /sys/class/nvme."""
    names = host.check_output("ls /sys/class/nvme").split()
    return {sysfs(host, "/sys/class/nvme/%s/serial" % name): name for name in names}


def namespace_of(host, ctrl):
    """The block device of a controller's first namespace (nvmeXnY)."""
    out = host.check_output("ls -d /sys/class/nvme/%s/%sn* 2>/dev/null || true" % (ctrl, ctrl)).split()
    assert out, "controller %s has no namespace" % ctrl
    return out[0].rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def facts(host):
    """The collection's facts, gathered on the node in check mode (read-only by contract)."""
    result = host.ansible("ai_storage.checkpoint_io.checkpoint_io_facts", "gather_subset=all", check=True)
    assert result.get("changed") is False, result
    return result["ansible_facts"]["checkpoint_io"]
