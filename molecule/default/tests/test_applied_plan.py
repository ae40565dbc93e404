"""The node's plan (issue 32): what the last run of the playbook wrote as <report_dir>/plan/<node>.json before it
changed anything is what the node has now - read back from its sysfs, its ds_config, cufile.json (through the
collection's facts) and its mounts - and the record on the node is the same plan. (Named to run before
test_checkpoint_pipeline.py, whose last test reverts the ds_config.)"""
import json
import os

import pytest
from conftest import active_scheduler
from labplay import record_data

STATE_DIR = "/var/lib/ai_storage_checkpoint_io"
DS_CONFIG = "/etc/deepspeed/ds_config.json"


@pytest.fixture(scope="module")
def plan(host):
    name = host.backend.get_hostname()
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "reports", "plan", name + ".json")) as handle:
        return json.load(handle)


def _queues(node):
    return dict((ns, value["queue"]) for ctrl in node["controllers"].values()
                for ns, value in ctrl["namespaces"].items())


def test_the_plan_is_recorded_on_the_node_as_written_on_the_controller(host, plan):
    recorded = record_data(host.file(STATE_DIR + "/plan.json").content_string, "plan")
    assert dict(recorded, made_at=None) == dict(plan, made_at=None)
    assert plan["problems"] == [] and plan["check_mode"] is False
    assert sorted(d["serial"] for d in plan["drives"]["selected"]) == ["DATA0001", "DATA0002"]


def test_each_drive_has_the_queue_values_the_plan_gave_it(node, plan):
    queues = _queues(node)
    drives = plan["block_layer"]["drives"]
    assert sorted(drives) == sorted(d["name"] for d in plan["drives"]["selected"])
    for name, part in drives.items():
        found = queues[name]
        for key, value in part["after"].items():
            got = active_scheduler(found[key]) if key == "scheduler" else int(found[key])
            assert got == value, (name, key, got, value)


def test_the_ds_config_has_the_plans_aio_section(host, plan):
    aio = json.loads(host.file(DS_CONFIG).content_string)["aio"]
    wanted = plan["deepspeed_config"]["aio"]
    # queue_depth auto: on this run the depth is the knee the sweep recorded (the run before measured it)
    assert plan["queue_depth"]["policy"] == "auto" and plan["queue_depth"]["measured"] is not None
    assert aio["queue_depth"] == wanted["queue_depth"] == plan["queue_depth"]["per_rank"]
    assert aio["block_size"] == wanted["block_size"]
    assert aio["use_gds"] is wanted["use_gds"] is False


def test_the_ds_config_has_the_plans_checkpoint_writer(host, plan):
    writer = plan["deepspeed_config"]["writer"]
    assert writer["manage"] is True and writer["errors"] == []  # checkpoint_io_deepspeed_writer: manage
    assert json.loads(host.file(DS_CONFIG).content_string)["checkpoint"]["writer"] == writer["section"]


def test_cufile_json_is_sized_for_the_plans_depth(facts, plan):
    props = facts["gds"]["cufile_json"]["properties"]
    for key, value in plan["gds"]["cufile_set"].items():
        assert props.get(key) == value, (key, props.get(key), value)
    assert props["execution.max_io_queue_depth"] >= plan["gds"]["queue_depth"] == plan["queue_depth"]["sizing"]


def test_the_volume_is_the_plans(node, plan):
    volume = plan["xfs"]
    mounts = [line.split() for line in node["mounts"].splitlines()]
    assert [m[2] for m in mounts if m[1] == volume["mount_point"]] == ["xfs"]
    members = sorted(os.path.basename(device) for device in volume["md"]["members"])
    held = sorted(ns for ctrl in node["controllers"].values() for ns, value in ctrl["namespaces"].items()
                  if any(h.startswith("md") for h in value["holders"]))
    assert held == members
