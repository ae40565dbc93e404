"""Bad input is refused before any write, naming the variable, the value and the limit; revert removes the
records (twice: the second changes nothing)."""
import pytest

from thermal_node import playbook, read_node


@pytest.mark.parametrize("extra, message", [
    ("thermal_validate_duration=0", "thermal_validate_duration: 0 is out of range [1..86400]"),
    ("thermal_validate_interval=30", "thermal_validate_interval: 30 s is longer than thermal_validate_duration 20 s"),
    ("thermal_validate_hot_margin_c=80", "thermal_validate_hot_margin_c: 80 is out of range [0..50]"),
    ("thermal_validate_drop_fraction=1.5", "thermal_validate_drop_fraction: 1.5 is out of range (0..1)"),
])
def test_bad_input_is_refused_before_any_write(host, extra, message):
    before = read_node(host)
    rc, output, recap = playbook("converge.yml", extra)
    flat = " ".join(output.split())
    assert rc != 0 and message in flat and "Nothing was written" in flat, flat[-2000:]
    assert recap["node1"]["changed"] == 0
    after = read_node(host)
    assert after["thermal"] == before["thermal"] and after["series"] == before["series"]
    assert "Start the sustained write" not in output


def test_revert_removes_the_records_and_a_second_revert_changes_nothing(host):
    rc, output, recap = playbook("converge.yml", "thermal_validate_state=absent")
    assert rc == 0 and recap["node1"]["changed"] == 2, output[-2000:]
    state = read_node(host)
    assert state["thermal"] is None and state["series"] is None
    rc, output, recap = playbook("converge.yml", "thermal_validate_state=absent")
    assert rc == 0 and recap["node1"]["changed"] == 0, output[-2000:]
