"""Case (c): DATA0001's ceiling drops 8 s into the write with no thermal evidence (no temperature rise, no counter,
no warning): not called thermal, the node passes (thermal_validate_failure fail), and this cool validation lifts
the back-off case (b) recorded: deepspeed_config's next run writes depth 8 again."""
import pytest

from thermal_node import THROTTLE_PERCENT, by_serial, lab, playbook, read_node, report


@pytest.fixture(scope="module")
def dropped(host):
    try:
        rc, output, _recap = playbook("converge.yml", inject=[["throttle", "node1", "data1", THROTTLE_PERCENT]])
    finally:
        lab("throttle", "node1", "data1", "off")
    return rc, output, read_node(host)


def test_a_drop_without_thermal_evidence_passes_and_is_reported_as_not_thermal(dropped):
    rc, output, state = dropped
    assert "INJECTED at" in output and rc == 0, output[-3000:]
    drive = by_serial(report())["DATA0001"]
    assert drive["verdict"] == "ok" and drive["evidence"] == []
    assert "no thermal evidence" in drive["not_thermal_drop"] and "not heat" in drive["not_thermal_drop"]
    assert state["thermal"]["verdict"] == "ok"


def test_the_cool_validation_lifts_the_back_off(dropped):
    _rc, _output, state = dropped
    assert state["thermal"]["backoff"] is None


def test_deepspeed_config_raises_the_depth_again(host, dropped):
    rc, output, _recap = playbook("deepspeed_config.yml")
    assert rc == 0, output[-3000:]
    assert read_node(host)["aio"]["queue_depth"] == 8
