"""The whole tuning order on the node: XFS volume, DeepSpeed aio section, checkpoint-write verification.

The node's files are read over SSH; the verification results are the JSON files the play fetched to the
controller (one per node). The written aio section is parsed by DeepSpeed's own get_aio_config when DeepSpeed
is installed (CI sets CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 and installs it, so there it is never skipped).
"""
import json
import os

import pytest
from labplay import record_data

STATE_DIR = "/var/lib/ai_storage_checkpoint_io"  # the state store's default (module_utils/common/state_store.py)

DS_CONFIG = "/etc/deepspeed/ds_config.json"
FOREIGN = {
    "train_batch_size": 256,
    "gradient_accumulation_steps": 4,
    "bf16": {"enabled": True},
    "zero_optimization": {
        "stage": 3,
        "offload_optimizer": {"device": "nvme", "nvme_path": "/mnt/checkpoints/offload", "pin_memory": True},
        "stage3_max_live_parameters": 1000000000,
    },
    "checkpoint": {"use_node_local_storage": True},
    "wall_clock_breakdown": False,
}


@pytest.fixture(scope="module")
def ds_config(host):
    return json.loads(host.file(DS_CONFIG).content_string)


@pytest.fixture(scope="module")
def sweep(host):
    return record_data(host.file(STATE_DIR + "/depth_sweep.json").content_string, "depth_sweep")


@pytest.fixture(scope="module")
def verify(host):
    name = host.backend.get_hostname()
    path = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "reports", "verify", name + ".json")
    with open(path) as handle:
        return json.load(handle)


def test_every_foreign_key_of_the_ds_config_is_kept(ds_config):
    for key, value in FOREIGN.items():
        if key == "checkpoint":  # the writer section is added beside the keys found
            value = dict(value, writer=ds_config["checkpoint"]["writer"])
        assert ds_config[key] == value, key


def test_the_writer_section_is_written_beside_aio_and_deepspeed_reads_it_as_planned(ds_config):
    """checkpoint_io_deepspeed_writer: manage (molecule.yml). The buffer: DeepSpeed's 64 MiB holds two drains of the
    swept queue (depth at most 16 x 1 MiB); the drives' NUMA nodes are not known under QEMU (numa_node -1), so every
    one of the 4 ranks writes its share (REPLICA)."""
    writer = ds_config["checkpoint"]["writer"]
    assert writer == {"type": "FAST", "io_buffer_size": 64 * 1048576, "io_buffer_double": True,
                      "data_parallel": "REPLICA"}
    if os.environ.get("CHECKPOINT_IO_REQUIRE_DEEPSPEED") != "1":
        pytest.importorskip("deepspeed")
    from deepspeed.runtime.model_checkpointing.config import get_checkpoint_config
    parsed = get_checkpoint_config(ds_config)
    assert parsed["writer"] == dict(writer, show_statistics=False, decoupled=False, io_multiplier=1)
    assert parsed["tag_validation"] == "WARN"  # DeepSpeed's default: the rest of the section is as found


def test_aio_section_has_real_booleans_and_the_right_thread_key(ds_config):
    aio = ds_config["aio"]
    for key in ("single_submit", "overlap_events", "use_gds"):
        assert isinstance(aio[key], bool), (key, aio[key])
    assert aio["single_submit"] is False and aio["overlap_events"] is True
    assert aio["use_gds"] is False  # no GPU on the lab node: the GDS path is not DMA
    assert "num_threads" not in aio  # ignored by DeepSpeed: removed
    assert isinstance(aio["intra_op_parallelism"], int) and "thread_count" not in aio
    assert aio["block_size"] == 1048576


def test_queue_depth_is_the_depth_measured_with_the_ranks_at_once(ds_config, sweep):
    (key, entry), = sweep.items()
    assert key.endswith("|1048576|4") and entry["ranks"] == 4 and entry["repeats"] == 3
    assert entry["curve"] and entry["curve"][0]["depth"] == 1 and entry["curve"][-1]["depth"] == 16
    # the physics search: the first and the last depth, then what the prediction needs, each run once or again
    # where too close to call (up to the 3 repeats); its fallback, the walk, runs every depth 3 times
    search = entry["search"]
    assert search["method"] in ("physics", "walk") and search["measured_depths"] == [p["depth"] for p in entry["curve"]]
    assert search["runs"] == sum(len(p["repeats"]) for p in entry["curve"])
    for point in entry["curve"]:
        assert point["aggregate_depth"] == 4 * point["depth"]
        assert 1 <= len(point["repeats"]) <= 3 if search["method"] == "physics" else len(point["repeats"]) == 3
        assert point["bw_min"] <= point["bw_bytes"] <= point["bw_max"]
    knee = entry["knee"]
    assert knee["knee"] == 4 * knee["per_rank"] and knee["noise"] >= 0.05
    assert ds_config["aio"]["queue_depth"] == entry["per_rank_depth"] == knee["per_rank"]


def test_deepspeed_reads_the_written_section_as_written(ds_config):
    if os.environ.get("CHECKPOINT_IO_REQUIRE_DEEPSPEED") != "1":
        pytest.importorskip("deepspeed")
    from deepspeed.runtime.swap_tensor.aio_config import get_aio_config
    parsed = get_aio_config(ds_config)
    for key in ("block_size", "queue_depth", "intra_op_parallelism", "single_submit", "overlap_events", "use_gds"):
        assert parsed[key] == ds_config["aio"][key] and type(parsed[key]) is type(ds_config["aio"][key]), key


def test_a_backup_of_the_original_config_is_beside_it(host):
    backups = host.check_output("ls /etc/deepspeed/ | grep -c '^ds_config.json\\..*~$' || true")
    assert int(backups) == 1


def test_checkpoint_volume_is_mounted_xfs_on_the_data_drives(host):
    mount = host.mount_point("/mnt/checkpoints")
    assert mount.exists and mount.filesystem == "xfs"
    assert mount.device.startswith("/dev/md")


def test_the_baseline_was_measured_once_on_the_blank_drives_before_any_role(host):
    baseline = record_data(host.file(STATE_DIR + "/baseline.json").content_string, "baseline")
    assert baseline["where"] == "drives" and len(baseline["target"]) == 2  # no volume yet: the raw data drives
    assert "before the xfs role formatted them" in baseline["reason"]
    assert baseline["settings"]["queue_depth"] == 32 and baseline["settings"]["block_size"] == 262144
    assert len(baseline["runs"]) == 3 and baseline["throughput_gib_s"]["n"] == 3
    assert baseline["throughput_gib_s"]["min"] <= baseline["throughput_gib_s"]["median"] <= baseline["throughput_gib_s"]["max"]
    assert baseline["p99_ns"]["median"] > 0
    # The queues as found, before block_layer changed them (the scenario's drives start with the kernel default).
    assert sorted(baseline["block"]) == sorted(baseline["target"])
    for queue in baseline["block"].values():
        assert queue["scheduler"] and queue["nr_requests"] > 0


def test_verification_compares_with_the_baseline_medians_and_spread(verify):
    before, after = verify["before"], verify["after"]
    assert before["source"] == "baseline" and before["where"] == "drives"
    assert "before any role ran" in before["what"]
    for side in (before, after):
        assert len(side["runs"]) == 3 and side["throughput_gib_s"]["n"] == 3
        assert all(run["throughput_gib_s"] > 0 and run["duration_s"] > 0 and run["p99_ns"] > 0 for run in side["runs"])
        assert side["p99_ns"]["median"] > 0
    assert before["total_bytes"] == after["total_bytes"] == 256 * 1024 ** 2  # the same checkpoint both times
    assert before["settings"]["queue_depth"] == 32 and before["settings"]["block_size"] == 262144
    assert after["settings"]["block_size"] == 1048576
    # Raw drives before, the tuned volume after: not the same settings, so a ratio of the medians and a verdict.
    assert verify["same_settings"] is False and verify["verdict"] in ("faster", "slower", "within noise")
    assert verify["ratio"] == pytest.approx(after["throughput_gib_s"]["median"] / before["throughput_gib_s"]["median"],
                                            abs=0.002)
    assert verify["ratio_low"] <= verify["ratio"] <= verify["ratio_high"]
    assert verify["p99_ratio"] == pytest.approx(after["p99_ns"]["median"] / before["p99_ns"]["median"], abs=0.002)
    assert verify["after_ceiling"] == pytest.approx(after["throughput_gib_s"]["median"] / verify["ceiling_gib_s"],
                                                    abs=0.01)
    assert verify["ranks"] == 4 and verify["devices"] and verify["repeats"] == 3


def test_each_write_was_read_back_before_and_after(verify, host):
    """The restore read (checkpoint_io_verify_restore, on by default): each write of both sides read back at once,
    every rank its whole shard; medians, spread and after/before as for the writes."""
    restore = verify["restore"]
    for side in ("before", "after"):
        assert restore[side]["n"] == 3 and restore[side]["min"] <= restore[side]["median"] <= restore[side]["max"]
        assert restore[side]["min"] > 0
    assert all(run["restore_gib_s"] > 0 for run in verify["before"]["runs"] + verify["after"]["runs"])
    assert restore["ratio"] == pytest.approx(restore["after"]["median"] / restore["before"]["median"], abs=0.002)
    # the baseline record on the node keeps its restore reads with its writes
    baseline = record_data(host.file(STATE_DIR + "/baseline.json").content_string, "baseline")
    assert baseline["restore_gib_s"]["n"] == 3


def test_step_7_validated_the_drives_behind_the_volume_and_recorded_no_back_off(host):
    """tune_checkpoint_nodes.yml's thermal_validate play (6 s here): both data drives sampled, ok (the emulated
    drives keep one temperature and raise no warning), no back-off, the time series on the controller."""
    name = host.backend.get_hostname()
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "reports", "thermal", name + ".json")) as handle:
        series = json.load(handle)
    record = record_data(host.file(STATE_DIR + "/thermal.json").content_string, "thermal")
    assert record["verdict"] == "ok" and record["backoff"] is None
    assert sorted(record["drives"]) == ["DATA0001", "DATA0002"] and record["ranks"] == 4
    assert sorted(d["serial"] for d in series["drives"]) == ["DATA0001", "DATA0002"] and len(series["samples"]) >= 4
    assert all(d["verdict"] == "ok" and d["wctemp_c"] and d["peak_temp_c"] for d in series["drives"])


def test_no_shard_is_left_behind(host):
    assert host.check_output("find /mnt/checkpoints -name '*.ckpt' | wc -l") == "0"


# Last in this file (the tests run in file order per node): they change the ds_config.
def _role(host, *extra):
    from labplay import run_playbook
    scenario = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = ["--limit", host.backend.get_hostname()]
    for item in extra:
        args += ["-e", item]
    return run_playbook(os.path.join(scenario, "deepspeed_config.yml"), *args)


def test_bad_input_is_refused_before_any_change(host):
    before = host.file(DS_CONFIG).content_string
    rc, out, dummy = _role(host, "deepspeed_config_queue_depth=0")
    assert rc != 0
    assert "deepspeed_config_queue_depth: 0 is out of range: per-rank depth 1..65535, or auto" in out
    rc, out, dummy = _role(host, "deepspeed_config_ranks=2000", "deepspeed_config_use_gds=maybe")
    assert rc != 0
    assert "deepspeed_config_ranks: 2000 is out of range 1..1024 (ranks per node)" in out
    assert "deepspeed_config_use_gds: \"maybe\" must be auto, true or false" in out
    assert "Nothing was changed" in out
    assert host.file(DS_CONFIG).content_string == before


def test_revert_puts_back_the_aio_section_found_and_keeps_the_rest(host):
    rc, out, recap = _role(host, "deepspeed_config_state=absent")
    assert rc == 0, out[-3000:]
    assert recap[host.backend.get_hostname()]["changed"] > 0
    config = json.loads(host.file(DS_CONFIG).content_string)
    assert config["aio"] == {"block_size": 262144, "queue_depth": 32, "num_threads": 4, "single_submit": "false",
                             "overlap_events": "true"}
    assert config["checkpoint"] == FOREIGN["checkpoint"]  # the writer section removed, the key found kept
    for key, value in FOREIGN.items():
        assert config[key] == value, key
    rc, out, recap = _role(host, "deepspeed_config_state=absent")
    assert rc == 0 and recap[host.backend.get_hostname()]["changed"] == 0, out[-3000:]
