"""Case (b): DATA0002 throttled to THROTTLE_PERCENT (5%) of its ceiling and its critical-warning bit 1 (temperature)
raised 8 s into the sustained write: its verdict is throttling with that evidence, the back-off (Little's Law on the measured
latency) is recorded, deepspeed_config's next run writes it into the ds_config, and the verification writes with
it (once the fault is cleared: the verification refuses a drive that still reports a critical warning). DATA0001
slows with it (RAID0 waits for the slower member) and is not called thermal."""
import pytest

from thermal_node import THROTTLE_PERCENT, by_serial, lab, playbook, read_node, report


@pytest.fixture(scope="module")
def throttled(host):
    """The validation with the fault (told to warn), the fault cleared, then the verification (the ds_config still
    holds depth 8, as when tune_checkpoint_nodes.yml verifies right after thermal_validate) and deepspeed_config's
    next run: (rc of each, their output, the node's state)."""
    try:
        runs = [playbook("throttled.yml", inject=[["throttle", "node1", "data2", THROTTLE_PERCENT],
                                                  ["critical-warning", "node1", "data2", "2"]])]
    finally:
        lab("throttle", "node1", "data2", "off")
        lab("critical-warning", "node1", "data2", "0")
    runs.append(playbook("verify.yml"))  # the ds_config still says 8: this run's verification takes the back-off
    runs.append(playbook("deepspeed_config.yml"))
    return [run[0] for run in runs], "\n".join(run[1] for run in runs), read_node(host)


def test_the_run_went_on_with_the_fault_injected_mid_write(throttled):
    rcs, output, _state = throttled
    assert "INJECTED at" in output and rcs == [0, 0, 0], output[-3000:]


def test_data2_is_throttling_with_its_evidence_and_data1_is_not_thermal(throttled):
    doc = by_serial(report())
    hot, other = doc["DATA0002"], doc["DATA0001"]
    assert hot["verdict"] == "throttling"
    assert any("temperature bit" in line for line in hot["evidence"]), hot
    assert hot["warning_bits_seen"]["temperature_threshold"] >= 8
    # the bandwidth fell by more than the role's drop threshold (0.2); how far depends on where the throttle lands
    # in the early and late windows under TCG (measured 0.386 to about 0.6 of a 70% throttle), not a timing bound
    assert hot["bw_drop_fraction"] > 0.2 and hot["bw_late_bytes"] < 0.8 * hot["bw_early_bytes"], hot
    assert other["verdict"] == "ok"


def test_the_back_off_is_recorded_and_lands_in_the_ds_config(throttled):
    _rc, output, state = throttled
    backoff = state["thermal"]["backoff"]
    assert backoff["apply"] is True and backoff["drives"] == ["DATA0002"]
    assert 1 <= backoff["per_rank_depth"] < 8 and backoff["from_depth"] == 8
    assert state["aio"]["queue_depth"] == backoff["per_rank_depth"]
    assert "per-rank depth 8 kept at %d" % backoff["per_rank_depth"] in output


def test_the_verification_writes_with_the_back_off_before_the_ds_config_has_it(throttled):
    _rc, output, state = throttled
    settings = report("verify")["after"]["settings"]
    assert settings["queue_depth"] == state["thermal"]["backoff"]["per_rank_depth"]
    assert "per-rank depth 8 kept at %d" % settings["queue_depth"] in settings["thermal_note"]
    assert "thermal back-off: per-rank depth 8 kept at" in " ".join(output.split())


def test_the_summary_line_names_verdict_peak_counters_bandwidth_and_back_off(throttled):
    lines = [line for line in report()["lines"] if "DATA0002" in line]
    assert len(lines) == 1 and "throttling - peak" in lines[0] and "WCTEMP 70" in lines[0]
    assert "warning_temp_time +0 min" in lines[0] and "TMT1 +0" in lines[0] and "bandwidth first" in lines[0]
    assert "back-off: per-rank depth 8 -> " in lines[0]
