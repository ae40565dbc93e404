"""The role's answer on a node without a GPU: unavailable with the reason, the overrides named; required fails
naming it and changes nothing; check mode changes nothing; bad input is refused naming the value."""
from gds_node import CUFILE, LOCAL, read_node, role


def test_preferred_reports_unavailable_with_the_reason_and_changes_nothing(host):
    before = read_node(host)
    rc, out, recap, result = role()
    assert rc == 0, out[-3000:]
    assert recap["node1"]["changed"] == 0, out[-3000:]
    assert result["mode"] == "unavailable"
    assert result["reason"].startswith("no NVIDIA GPU")
    assert result["proven"] is None and "no NVIDIA GPU" in result["proof"]
    assert [c["status"] for c in result["checks"]] == ["n/a", "n/a", "n/a"]
    sources = [o["source"] for o in result["overrides"]]
    assert any("/home/trainer/.bashrc" in s for s in sources), sources
    assert [o["path"] for o in result["overrides"]].count(LOCAL) == 1
    assert "WARNING node1: no GPUDirect Storage here" in out
    assert read_node(host)["files"] == before["files"]


def test_required_fails_naming_the_reason_and_changes_nothing(host):
    before = read_node(host)
    rc, out, recap, _result = role("gds_policy=required")
    assert rc != 0
    assert "gds_policy is required but GPUDirect Storage is not possible on this node: no NVIDIA GPU" in out
    assert recap["node1"]["failed"] == 1 and recap["node1"]["changed"] == 0
    assert read_node(host)["files"] == before["files"]


def test_check_mode_changes_nothing(host):
    before = read_node(host)
    rc, out, recap, _result = role("--check", "gds_queue_depth=200")
    assert rc == 0, out[-3000:]
    assert recap["node1"]["changed"] >= 1  # it would raise execution.max_io_queue_depth to 200
    assert '"max_io_queue_depth": 200' in out  # the diff
    assert read_node(host)["files"] == before["files"]


def test_bad_input_is_refused_naming_the_value(host):
    before = read_node(host)
    for extra, message in (
            # the role's argument_specs refuse a value outside choices before the role's own checks
            ("gds_policy=sometimes", "value of gds_policy must be one of: required, preferred, got: sometimes"),
            ("gds_block_size=1000", "gds_block_size: 1000 is not a multiple of 4096"),
            ("gds_queue_depth=0", "gds_queue_depth: 0 must be a whole number from 1 to 65535"),
            ("gds_install_packages=true", "gds_package_repo names no repository")):
        rc, out, _recap, _result = role(extra)
        assert rc != 0 and message in out, (extra, out[-2000:])
        assert "Traceback" not in out
    assert read_node(host)["files"] == before["files"]
    assert before["files"][CUFILE] is not None
