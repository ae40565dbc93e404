"""Revert of a file the role created (removed), then a stock file with comments: keys set, comments and every
other key kept, backed up; the overrides aligned on request; the revert puts both files back byte for byte."""
from gds_node import CUFILE, DEPTH, LOCAL, STATE, flat, put, read_node, role

STOCK = """// Stock-like cuFile configuration (written by the test).
{
    // logging
    "logging": {
        "dir": "/var/log/cufile", // where the logs go
        "level": "ERROR"
    },
    /* execution knobs */
    "execution": {
        "max_io_queue_depth": 128,
        // "max_io_threads": 8,
        "max_io_threads": 4
    },
    "properties": {
        "max_direct_io_size_kb": 16384,
        "allow_compat_mode": true,
        "rdma_dev_addr_list": []
    }
}
"""


def test_revert_removes_the_file_the_role_created(host):
    rc, out, _recap, _result = role("gds_state=absent")
    assert rc == 0, out[-3000:]
    node = read_node(host)
    assert node["files"][CUFILE] is None
    assert node["files"][STATE + "/gds.json"] is None and node["files"][STATE + "/cufile_config.json"] is None


def test_a_stock_file_keeps_its_comments_and_other_keys(host):
    put(host, CUFILE, STOCK)
    original_local = read_node(host)["files"][LOCAL]
    rc, out, _recap, result = role("gds_align_overrides=true")
    assert rc == 0, out[-3000:]
    node = read_node(host)
    text = node["files"][CUFILE]
    for line in STOCK.splitlines():
        if "//" in line or "/*" in line:
            assert line in text, line  # every comment line kept as it was
    values = flat(text)
    assert values["execution.max_io_queue_depth"] == DEPTH
    assert values["properties.max_direct_io_size_kb"] == 32768
    assert values["logging.dir"] == "/var/log/cufile" and values["properties.rdma_dev_addr_list"] == []
    assert values["execution.max_io_threads"] == 4
    assert len(node["backups"]) == 1
    assert sorted(result["cufile_changed_keys"]) == [
        "execution.max_io_queue_depth", "properties.max_device_pinned_mem_size_kb", "properties.max_direct_io_size_kb"]
    assert flat(node["files"][LOCAL])["execution.max_io_queue_depth"] == DEPTH  # aligned
    assert node["files"][LOCAL] != original_local

    rc, out, _recap, _result = role("gds_state=absent")
    assert rc == 0, out[-3000:]
    node = read_node(host)
    assert node["files"][CUFILE] == STOCK
    assert node["files"][LOCAL] == original_local
    assert node["files"][STATE + "/gds.json"] is None and node["files"][STATE + "/cufile_config.json"] is None
    host.check_output("rm -f %s.*~" % CUFILE)
