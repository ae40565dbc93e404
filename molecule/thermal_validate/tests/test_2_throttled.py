"""Case (b): DATA0002 throttled to THROTTLE_PERCENT (5%) of its ceiling and its critical-warning bit 1 (temperature)
raised 8 s into the sustained write of tune_checkpoint_nodes.yml's thermal play: its verdict is throttling with that
evidence, the back-off (Little's Law on the measured latency) is recorded and written into the ds_config in the same
run (issue 32: one run converges), and the verification writes with it (once the fault is cleared: the
verification refuses a drive that still reports a critical warning). DATA0001 slows with it (RAID0 waits for the
slower member) and is not called thermal."""
import pytest

from thermal_node import THROTTLE_PERCENT, by_serial, lab, playbook, read_node, report


# tune_checkpoint_nodes.yml --tags thermal_validate on the volume prepare.yml built (the xfs step's own), its
# sustained write as long as the role's own runs here, its verdict told to warn; no baseline (not a first run)
TUNE = ("checkpoint_io_xfs=true", "checkpoint_io_baseline_measure=false", "checkpoint_io_thermal_duration=20",
        "checkpoint_io_remeasure=always",
        "thermal_validate_failure=warn")


@pytest.fixture(scope="module")
def throttled(host):
    """The tuning playbook's thermal play with the fault, the ds_config read right after it, the fault cleared, then
    the verification: (rc of each, their output, the node's state after the thermal play, after all)."""
    try:
        runs = [playbook("throttled.yml", *TUNE, tags="thermal_validate",
                         inject=[["throttle", "node1", "data2", THROTTLE_PERCENT],
                                 ["critical-warning", "node1", "data2", "2"]])]
        after_first = read_node(host)
    finally:
        lab("throttle", "node1", "data2", "off")
        lab("critical-warning", "node1", "data2", "0")
    runs.append(playbook("verify.yml"))
    return [run[0] for run in runs], "\n".join(run[1] for run in runs), after_first, read_node(host)


def test_the_run_went_on_with_the_fault_injected_mid_write(throttled):
    rcs, output, _first, _state = throttled
    assert "INJECTED at" in output and rcs == [0, 0], output[-3000:]


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


def test_the_back_off_is_in_the_ds_config_when_the_run_that_found_it_ends(throttled):
    _rc, output, first, _state = throttled
    backoff = first["thermal"]["backoff"]
    assert backoff["apply"] is True and backoff["drives"] == ["DATA0002"]
    assert 1 <= backoff["per_rank_depth"] < 8 and backoff["from_depth"] == 8
    # written by the same run (the thermal play's deepspeed_config step), before its verdict
    assert first["aio"]["queue_depth"] == backoff["per_rank_depth"]
    assert "per-rank depth 8 kept at %d" % backoff["per_rank_depth"] in output
    assert output.index("Merge the aio section with the back-off") < output.index("Give the validation's verdict")


def test_the_verification_writes_with_the_back_off(throttled):
    _rc, _output, _first, state = throttled
    settings = report("verify")["after"]["settings"]
    assert settings["queue_depth"] == state["thermal"]["backoff"]["per_rank_depth"] == state["aio"]["queue_depth"]


def test_the_summary_line_names_verdict_peak_counters_bandwidth_and_back_off(throttled):
    lines = [line for line in report()["lines"] if "DATA0002" in line]
    assert len(lines) == 1 and "throttling - peak" in lines[0] and "WCTEMP 70" in lines[0]
    assert "warning_temp_time +0 min" in lines[0] and "TMT1 +0" in lines[0] and "bandwidth first" in lines[0]
    assert "back-off: per-rank depth 8 -> " in lines[0]
