"""Case (a): converge (and idempotence) ran a cool validation on drives behind the knee8 model: every drive ok,
no back-off, the ds_config's depth untouched, the time series on the node and the controller, nothing left."""

from thermal_node import by_serial, report


def test_the_record_says_ok_for_both_drives_and_backs_off_nothing(node):
    record = node["thermal"]
    assert record["verdict"] == "ok" and record["backoff"] is None
    assert record["drives"] == {"DATA0001": {"name": record["drives"]["DATA0001"]["name"], "verdict": "ok"},
                                "DATA0002": {"name": record["drives"]["DATA0002"]["name"], "verdict": "ok"}}
    assert record["ranks"] == 2 and record["queue_depth"] == 8 and record["block_size"] == 1048576


def test_the_ds_config_keeps_its_depth(node):
    assert node["aio"]["queue_depth"] == 8


def test_the_time_series_has_a_sample_per_second_per_drive_with_the_drive_thresholds(node):
    doc = report()
    # idempotence ran last: nothing changed, so it reused the validation (issue 34) and wrote nothing
    assert doc["reused"]["reuse"] is True and doc["reused"]["reason"].startswith("reused: measured "), doc["reused"]
    doc = dict((key, value) for key, value in doc.items() if key != "reused")
    assert doc == node["series"]  # the controller's copy is the node's record
    assert doc["measured_at"] and doc["depends_on"]["settings"]["ranks"] == 2
    samples = doc["samples"]
    assert len(samples) >= 18, len(samples)  # 20 s at 1 s
    names = sorted(doc["sampled_drives"])
    for sample in samples:
        assert sorted(sample["drives"]) == names
        for drive in sample["drives"].values():
            assert drive["temp_source"] == "hwmon" and drive["temp_c"] > 0 and drive["error"] is None
            assert drive["critical_warning"] == 0 and drive["thm_temp1_trans_count"] == 0
    for info in doc["sampled_drives"].values():
        assert info["wctemp_c"] == 70 and info["cctemp_c"] == 100 and info["hctma"] == 0
    drives = by_serial(doc)
    for serial in ("DATA0001", "DATA0002"):
        drive = drives[serial]
        assert drive["verdict"] == "ok" and drive["peak_temp_c"] < drive["wctemp_c"]
        assert drive["bw_first_bytes"] > 0 and drive["bw_last_bytes"] > 0 and drive["intervals"] >= 17
        assert drive["latency_min_ms"] > 0
    assert all(line.split(": ", 1)[1].startswith("ok - peak") for line in doc["lines"]), doc["lines"]


def test_nothing_is_left_on_the_volume(node):
    assert node["fio"] == [] and [e for e in node["entries"] if e.startswith(".checkpoint_io.")] == []
