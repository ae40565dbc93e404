# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest

from testenv import REAL_WORLD

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.nvme_cli import (
    ID_CTRL_KEYS,
    LIST_DEVICE_KEYS,
    NUM_QUEUES_KEYS,
    OCP_SMART_ADD_LOG_KEYS,
    SMART_LOG_KEYS,
    SMARTCTL_KEYS,
    parse_get_feature_num_queues,
    parse_id_ctrl,
    parse_nvme_list,
    parse_ocp_smart_add_log,
    parse_smart_log,
    parse_smartctl_json,
)
from helpers import fixture as _fixture, subset


def fixture(name):
    return _fixture('nvme_cli', name)


NO_WARNINGS = {
    "available_spare": False, "temperature_threshold": False, "reliability_degraded": False,
    "read_only": False, "volatile_backup_failed": False, "pmr_read_only": False,
}

BAD_INPUTS = [
    None, "", "   \n", "not json", "{", '{"Devices": [', "[1, 2, 3]", '"text"', "42", b"\x00\x01", 17,
]


# ---------------------------------------------------------------- nvme list
LIST_CASES = [
    # (fixture, layout, device count, index, expected subset)
    ("list_v1x_flat_int32_overflow.json", "flat", 2, 0, {
        "device": "/dev/nvme0n1", "generic_path": None, "controller": None, "subsystem": None,
        "model": "EXAMPLECORP DC7100 3.84TB", "serial": "EXC0000A0001", "firmware": "FW10A3B7",
        "nsid": 1, "used_bytes": None, "size_bytes": 7501476528 * 512, "sector_size": 512,
        "transport": None, "address": None, "paths": [],
    }),
    ("list_v1x_flat_int32_overflow.json", "flat", 2, 1, {
        "device": "/dev/nvme1n1", "nsid": 1, "used_bytes": 1099511627776,
        "size_bytes": 3840755982336, "sector_size": 4096,
    }),
    ("list_v2.3_flat.json", "flat", 2, 1, {
        "device": "/dev/nvme0n2", "nsid": 2, "size_bytes": 1073741824, "used_bytes": 0,
        "sector_size": 4096, "serial": "EX9P1N0R123456A", "generic_path": None,
    }),
    ("list_v2.13_flat_generic_path.json", "flat", 2, 1, {
        "device": "/dev/nvme1n1", "generic_path": "/dev/ng1n1", "serial": "DATA0002",
        "model": "QEMU NVMe Ctrl", "size_bytes": 68719476736, "nsid": 1,
    }),
    ("list_v2.11_nested_pcie.json", "nested", 2, 1, {
        "device": "/dev/nvme1n1", "generic_path": "/dev/ng1n1", "controller": "nvme1",
        "subsystem": "nvme-subsys1",
        "subsystem_nqn": "nqn.2019-10.com.example:nvme:dc7100:EXC0000B0002",
        "model": "EXAMPLECORP DC7100 7.68TB", "serial": "EXC0000B0002", "firmware": "FW10A3B9",
        "nsid": 1, "size_bytes": 7681501126656, "used_bytes": 536870912000, "sector_size": 4096,
        "transport": "pcie", "address": "0000:c2:00.0",
        "paths": [{"controller": "nvme1", "transport": "pcie", "address": "0000:c2:00.0", "ana_state": None}],
    }),
    ("list_nested_nvmeof_multipath.json", "nested", 3, 0, {
        "device": "/dev/nvme0n1", "controller": "nvme0", "transport": "pcie", "subsystem": "nvme-subsys0",
    }),
    ("list_nested_nvmeof_multipath.json", "nested", 3, 1, {
        "device": "/dev/nvme1n1", "generic_path": "/dev/ng1n1", "subsystem": "nvme-subsys1",
        "subsystem_nqn": "nqn.2024-01.io.example:ckpt-pool-01", "model": "Linux",
        "serial": "a1b2c3d4e5f60718", "nsid": 1, "size_bytes": 107374182400,
        # two paths over two transports: nothing common to report at namespace level
        "controller": None, "transport": None, "address": None,
        "paths": [
            {"controller": "nvme2", "transport": "tcp", "ana_state": "optimized",
             "address": "traddr=192.0.2.10,trsvcid=4420,src_addr=192.0.2.100"},
            {"controller": "nvme3", "transport": "rdma", "ana_state": "non-optimized",
             "address": "traddr=198.51.100.10,trsvcid=4420,src_addr=198.51.100.100"},
        ],
    }),
    ("list_nested_nvmeof_multipath.json", "nested", 3, 2, {
        "device": "/dev/nvme1n2", "nsid": 2, "sector_size": 4096, "size_bytes": 214748364800,
        "paths": [
            {"controller": "nvme2", "transport": "tcp", "ana_state": "optimized",
             "address": "traddr=192.0.2.10,trsvcid=4420,src_addr=192.0.2.100"},
            {"controller": "nvme3", "transport": "rdma", "ana_state": "inaccessible",
             "address": "traddr=198.51.100.10,trsvcid=4420,src_addr=198.51.100.100"},
        ],
    }),
]


@pytest.mark.parametrize("name, layout, count, index, expected", LIST_CASES)
def test_parse_nvme_list_layouts(name, layout, count, index, expected):
    result = parse_nvme_list(fixture(name))
    assert result["layout"] == layout
    assert len(result["devices"]) == count
    for device in result["devices"]:
        assert sorted(device) == sorted(LIST_DEVICE_KEYS)
    subset(result["devices"][index], expected)


def test_parse_nvme_list_int32_overflow_is_reported_not_hidden():
    result = parse_nvme_list(fixture("list_v1x_flat_int32_overflow.json"))
    errors = result["errors"]
    assert set(errors) == {"devices[0].used_bytes"}
    assert "-2147483648" in errors["devices[0].used_bytes"]
    assert "overflow" in errors["devices[0].used_bytes"]


@pytest.mark.parametrize("text", ['{"Devices":[]}', '{\n  "Devices" : [\n  ]\n}', "{}"])
def test_parse_nvme_list_empty(text):
    assert parse_nvme_list(text) == {"layout": "empty", "devices": [], "errors": {}}


def test_parse_nvme_list_nested_subsystem_without_controllers():
    text = json.dumps({"Devices": [{"HostNQN": "nqn.x", "Subsystems": [{
        "Subsystem": "nvme-subsys0", "SubsystemNQN": "nqn.2024-01.io.example:a",
        "Namespaces": [{"NameSpace": "nvme4n1", "Generic": "ng4n1", "NSID": 1, "UsedBytes": 2097152,
                        "MaximumLBA": 25004872368, "PhysicalSize": 12802494652416, "SectorSize": 512}]}]}]})
    result = parse_nvme_list(text)
    assert result["layout"] == "nested"
    subset(result["devices"][0], {
        "device": "/dev/nvme4n1", "generic_path": "/dev/ng4n1", "controller": None, "model": None,
        "paths": [], "size_bytes": 12802494652416, "used_bytes": 2097152, "transport": None,
    })
    assert result["errors"] == {}


def test_parse_nvme_list_v1x_verbose_each_device_entry_is_a_subsystem():
    """nvme-cli 1.x `nvme list -v -o json` (1.x's space-colon-space spacing): Devices[] holds the subsystems
    themselves, each with Controllers[] (their Namespaces[]) and no HostNQN/Subsystems wrapper."""
    text = (
        '{\n  "Devices" : [\n    {\n      "Subsystem" : "nvme-subsys1",\n'
        '      "SubsystemNQN" : "nqn.2014.08.org.nvmexpress:144d144dS4EXAMPLE0001 SAMPLE PM9A3",\n'
        '      "Controllers" : [\n        {\n          "Controller" : "nvme1",\n'
        '          "SerialNumber" : "S4EXAMPLE0001",\n          "ModelNumber" : "SAMPLE PM9A3",\n'
        '          "Firmware" : "GDC5302Q",\n          "Transport" : "pcie",\n'
        '          "Address" : "0000:3b:00.0",\n          "Namespaces" : [\n            {\n'
        '              "NameSpace" : "nvme1n1",\n              "NSID" : 1,\n'
        '              "UsedBytes" : 4096,\n              "MaximumLBA" : 937703088,\n'
        '              "PhysicalSize" : 480103981056,\n              "SectorSize" : 512\n            }\n'
        '          ]\n        }\n      ],\n      "Namespaces" : [\n      ]\n    }\n  ]\n}\n')
    result = parse_nvme_list(text)
    assert result["layout"] == "nested" and result["errors"] == {}
    assert len(result["devices"]) == 1
    subset(result["devices"][0], {
        "device": "/dev/nvme1n1", "controller": "nvme1", "subsystem": "nvme-subsys1", "serial": "S4EXAMPLE0001",
        "model": "SAMPLE PM9A3", "transport": "pcie", "address": "0000:3b:00.0", "nsid": 1,
        "size_bytes": 480103981056,
    })


def test_parse_nvme_list_multipath_path_nodes_are_not_namespaces():
    text = json.dumps({"Devices": [
        {"DevicePath": "/dev/nvme0c0n1", "NameSpace": 1, "PhysicalSize": 0, "SectorSize": 512},
        {"DevicePath": "/dev/nvme0c1n1", "NameSpace": 1, "PhysicalSize": 0, "SectorSize": 512},
        {"DevicePath": "/dev/nvme0n1", "NameSpace": 1, "PhysicalSize": 1000204886016, "SectorSize": 512,
         "SerialNumber": "FABRIC0001"}]})
    result = parse_nvme_list(text)
    assert [d["device"] for d in result["devices"]] == ["/dev/nvme0n1"] and result["layout"] == "flat"


def test_parse_nvme_list_wrong_type_in_one_field():
    doc = json.loads(fixture("list_v2.3_flat.json"))
    doc["Devices"][0]["SectorSize"] = "big"
    doc["Devices"][0]["PhysicalSize"] = {"oops": 1}
    result = parse_nvme_list(json.dumps(doc))
    first, second = result["devices"][0], result["devices"][1]
    assert first["sector_size"] is None and first["size_bytes"] is None
    assert first["used_bytes"] == 412316860416 and first["serial"] == "EX9P1N0R123456A"
    assert second["sector_size"] == 4096
    assert set(result["errors"]) == {"devices[0].sector_size", "devices[0].size_bytes"}


def test_parse_nvme_list_skips_non_object_entries():
    result = parse_nvme_list('{"Devices": [17, {"DevicePath": "/dev/nvme0n1", "NameSpace": 1}]}')
    assert result["layout"] == "flat"
    assert [d["device"] for d in result["devices"]] == ["/dev/nvme0n1"]
    assert "Devices[0]" in result["errors"]


@pytest.mark.parametrize("text", BAD_INPUTS + ['{"foo": 1}', '{"Devices": "none"}', '{"Devices": null}'])
def test_parse_nvme_list_bad_input(text):
    result = parse_nvme_list(text)
    assert result["layout"] is None and result["devices"] is None
    assert result["errors"]["_input"]


def test_parse_nvme_list_layout_detection_ignores_version_and_noise():
    text = "nvme-cli version 2.11 (pretend)\n" + fixture("list_v2.3_flat.json")
    assert parse_nvme_list(text)["layout"] == "flat"


# ---------------------------------------------------------------- smart-log
SMART_CASES = [
    ("smart_log_v1x_floats_sensors.json", {
        "critical_warning": 0, "critical_warning_bits": NO_WARNINGS, "temperature_c": 45,
        "sensors_c": [45, 53], "available_spare_pct": 100, "available_spare_threshold_pct": 10,
        "percentage_used": 3, "data_units_read": 1765656, "data_units_written": 98176543,
        "power_on_hours": 8760, "unsafe_shutdowns": 6, "media_errors": 0, "num_err_log_entries": 12,
        "thm_temp1_trans_count": 0, "thm_temp1_total_time_s": 0,
    }),
    ("smart_log_v1x_misspelt_critical_warrning.json", {
        "critical_warning": 4,
        "critical_warning_bits": dict(NO_WARNINGS, reliability_degraded=True),
        "temperature_c": 28, "sensors_c": [28], "percentage_used": 97, "media_errors": 3,
        "available_spare_pct": 92,
    }),
    ("smart_log_v2.3_int.json", {
        "critical_warning": 0, "temperature_c": 36, "sensors_c": [], "percentage_used": 1,
        "available_spare_threshold_pct": 5, "warning_temp_time_min": 0, "critical_comp_time_min": 0,
    }),
    ("smart_log_v2.11_object_throttling.json", {
        "critical_warning": 2,
        "critical_warning_bits": dict(NO_WARNINGS, temperature_threshold=True),
        "temperature_c": 84, "sensors_c": [84, 76], "warning_temp_time_min": 7,
        "critical_comp_time_min": 1, "thm_temp1_trans_count": 12, "thm_temp2_trans_count": 2,
        "thm_temp1_total_time_s": 3600, "thm_temp2_total_time_s": 95, "percentage_used": 12,
    }),
    ("smart_log_v2.1.1_strings.json", {
        "critical_warning": 0, "temperature_c": 32, "data_units_written": 90210,
        "thm_temp1_trans_count": 1, "thm_temp1_total_time_s": 42, "power_on_hours": 120,
    }),
]


@pytest.mark.parametrize("name, expected", SMART_CASES)
def test_parse_smart_log_variants(name, expected):
    result = parse_smart_log(fixture(name))
    assert sorted(result) == sorted(SMART_LOG_KEYS + ("errors",))
    subset(result, expected)
    assert result["errors"] == {}
    for key in SMART_LOG_KEYS:
        assert not isinstance(result[key], (float, str)), key  # floats/strings normalised to int


def test_parse_smart_log_wrong_types_cost_one_field_each():
    result = parse_smart_log(fixture("smart_log_wrong_types.json"))
    assert set(result["errors"]) == {
        "temperature_c", "percentage_used", "data_units_read", "power_on_hours",
        "unsafe_shutdowns", "temperature_sensor_1",
    }
    for key in ("temperature_c", "percentage_used", "data_units_read", "power_on_hours", "unsafe_shutdowns"):
        assert result[key] is None
    assert result["sensors_c"] == [37]
    assert result["data_units_written"] == 90210
    assert result["critical_warning"] == 0
    assert "'hot'" in result["errors"]["temperature_c"]


@pytest.mark.parametrize("warning, value, bits", [
    ({"value": 0, "available_spare": 0, "temp_threshold": 0, "reliability_degraded": 0, "ro": 0,
      "vmbu_failed": 0, "pmr_ro": 0}, 0, NO_WARNINGS),
    ({"available_spare": 1, "temp_threshold": 1, "ro": 1}, 11,
     dict(NO_WARNINGS, available_spare=True, temperature_threshold=True, read_only=True)),
    ("0x09", 9, dict(NO_WARNINGS, available_spare=True, read_only=True)),
    (32, 32, dict(NO_WARNINGS, pmr_read_only=True)),
    (16.0, 16, dict(NO_WARNINGS, volatile_backup_failed=True)),
])
def test_parse_smart_log_critical_warning_forms(warning, value, bits):
    result = parse_smart_log(json.dumps({"critical_warning": warning, "temperature": 300}))
    assert result["critical_warning"] == value
    assert result["critical_warning_bits"] == bits
    assert result["errors"] == {}


@pytest.mark.parametrize("warning", [256, -1, "bad", {"value": "x"}, {"ro": "maybe"}, True])
def test_parse_smart_log_bad_critical_warning(warning):
    result = parse_smart_log(json.dumps({"critical_warning": warning, "temperature": 300}))
    assert result["critical_warning"] is None and result["critical_warning_bits"] is None
    assert "critical_warning" in result["errors"]
    assert result["temperature_c"] == 27


def test_parse_smart_log_zero_kelvin_is_not_reported():
    result = parse_smart_log('{"temperature": 0, "temperature_sensor_1": 0, "temperature_sensor_2": 300}')
    assert result["temperature_c"] is None
    assert result["sensors_c"] == [27]
    assert result["critical_warning"] is None and result["media_errors"] is None


@pytest.mark.parametrize("text", BAD_INPUTS + [fixture("smart_log_v1x_truncated.json")])
def test_parse_smart_log_bad_input(text):
    result = parse_smart_log(text)
    assert all(result[key] is None for key in SMART_LOG_KEYS)
    assert result["errors"]["_input"]


# ---------------------------------------------------------------- smartctl -j
def test_parse_smartctl_json_nvme():
    result = parse_smartctl_json(fixture("smartctl_7.4_aj_nvme_sensors.json"))
    assert sorted(result) == sorted(SMARTCTL_KEYS + ("errors",))
    subset(result, {
        "model": "EXAMPLECORP DC7100 3.84TB", "serial": "EXC0000D0007", "firmware": "FW10A3B7",
        "smart_passed": False, "critical_warning": 2,
        "critical_warning_bits": dict(NO_WARNINGS, temperature_threshold=True),
        "temperature_c": 82, "sensors_c": [82, 77], "available_spare_pct": 100,
        "available_spare_threshold_pct": 10, "percentage_used": 7, "warning_temp_time_min": 44,
        "data_units_written": 230001222,
        # smartctl JSON carries no thermal throttle counters
        "thm_temp1_trans_count": None, "thm_temp1_total_time_s": None,
        "errors": {},
    })


def test_parse_smartctl_json_info_only():
    result = parse_smartctl_json(fixture("smartctl_7.2_info_only.json"))
    assert result["model"] == "EXAMPLECORP DC7100 7.68TB"
    assert result["temperature_c"] is None and result["critical_warning"] is None
    assert "nvme_smart_health_information_log" in result["errors"]


@pytest.mark.parametrize("text", BAD_INPUTS)
def test_parse_smartctl_json_bad_input(text):
    result = parse_smartctl_json(text)
    assert all(result[key] is None for key in SMARTCTL_KEYS)
    assert result["errors"]["_input"]


# ---------------------------------------------------------------- id-ctrl
ID_CTRL_CASES = [
    ("id_ctrl_v1x.json", {
        "model": "EXAMPLECORP DC7100 3.84TB", "serial": "EXC0000A0001", "firmware": "FW10A3B7",
        "vendor_id": 4660, "mdts": 5, "mdts_bytes": 131072, "wctemp_c": 85, "cctemp_c": 90,
        "mntmt_c": 0, "mxtmt_c": 85, "hctma": True, "sqes_min_bytes": 64, "cqes_min_bytes": 16,
        "nn": 128, "subnqn": "nqn.2019-10.com.example:nvme:dc7100:EXC0000A0001", "errors": {},
    }),
    ("id_ctrl_v2_no_limits.json", {
        "model": "QEMU NVMe Ctrl", "serial": "DATA0001", "mdts": 0, "mdts_bytes": None,
        "wctemp_c": None, "cctemp_c": None, "mntmt_c": None, "mxtmt_c": None, "hctma": False,
        "nn": 256, "errors": {},
    }),
]


@pytest.mark.parametrize("name, expected", ID_CTRL_CASES)
def test_parse_id_ctrl(name, expected):
    result = parse_id_ctrl(fixture(name))
    assert sorted(result) == sorted(ID_CTRL_KEYS + ("errors",))
    subset(result, expected)


@pytest.mark.parametrize("mdts, expected", [(5, 131072), (7, 524288), (9, 2097152), (0, None)])
def test_parse_id_ctrl_mdts(mdts, expected):
    assert parse_id_ctrl(json.dumps({"mdts": mdts}))["mdts_bytes"] == expected


def test_parse_id_ctrl_hex_strings_and_wrong_types():
    result = parse_id_ctrl(json.dumps({
        "mn": "M", "sqes": "0x66", "cqes": "0x44", "mdts": "seven", "wctemp": "hot", "hctma": "0x1",
        "sn": ["not", "text"], "subnqn": "   ",
    }))
    subset(result, {"sqes_min_bytes": 64, "cqes_min_bytes": 16, "hctma": True, "model": "M",
                    "mdts": None, "mdts_bytes": None, "wctemp_c": None, "serial": None, "subnqn": None})
    assert set(result["errors"]) == {"mdts", "wctemp_c", "serial"}


@pytest.mark.parametrize("text", BAD_INPUTS)
def test_parse_id_ctrl_bad_input(text):
    result = parse_id_ctrl(text)
    assert all(result[key] is None for key in ID_CTRL_KEYS)
    assert result["errors"]["_input"]


# ---------------------------------------------------------------- get-feature 0x7
@pytest.mark.parametrize("text, sq, cq, raw", [
    (fixture("get_feature_7_v2.txt"), 32, 32, 0x001F001F),
    (fixture("get_feature_7_v1_human.txt"), 128, 128, 0x7F007F),
    (fixture("get_feature_7_asymmetric.txt"), 8, 16, 0x000F0007),
    ("get-feature:0x07 (Number of Queues), Current value:0x00070007", 8, 8, 0x00070007),
    ("get-feature:0x7 (Number of Queues), Current value:0x3f003f # 64 queues", 64, 64, 0x3F003F),
    ("get-feature:0x07 (Number of Queues), Current value:0x00000000", 1, 1, 0),
])
def test_parse_get_feature_num_queues(text, sq, cq, raw):
    result = parse_get_feature_num_queues(text)
    assert result == {"submission_queues": sq, "completion_queues": cq, "raw": raw, "errors": {}}


@pytest.mark.parametrize("text", [
    None, "", "garbage", 7, fixture("get_feature_4_temperature.txt"),
    "get-feature:0x07 (Number of Queues), Current value:",
    "get-feature:0x07 (Number of Queues), Current value:0x1ffffffff",
])
def test_parse_get_feature_num_queues_bad_input(text):
    result = parse_get_feature_num_queues(text)
    assert all(result[key] is None for key in NUM_QUEUES_KEYS)
    assert result["errors"]["_input"]


# ---------------------------------------------------------------- OCP C0
def test_parse_ocp_smart_add_log():
    result = parse_ocp_smart_add_log(fixture("ocp_smart_add_log_c0.json"))
    assert sorted(result) == sorted(OCP_SMART_ADD_LOG_KEYS + ("errors",))
    subset(result, {
        "physical_media_written_bytes": (1 << 64) + 4096, "physical_media_read_bytes": 12884901888,
        "thermal_throttling_events": 4, "throttling_status": 1, "capacitor_health_pct": 98,
        "plp_start_count": 120, "percent_free_blocks": 7, "pcie_correctable_errors": 2,
        "incomplete_shutdowns": 0, "log_page_version": 3, "errors": {},
    })


def test_parse_ocp_smart_add_log_hi_lo_float_variant():
    text = json.dumps({"Physical media units written_hi": 0.0, "Physical media units written_lo": 4096.0,
                       "Number of Thermal throttling events": 2.0})
    result = parse_ocp_smart_add_log(text)
    assert result["physical_media_written_bytes"] == 4096
    assert result["thermal_throttling_events"] == 2
    assert result["physical_media_read_bytes"] is None


@pytest.mark.parametrize("text", BAD_INPUTS)
def test_parse_ocp_smart_add_log_bad_input(text):
    result = parse_ocp_smart_add_log(text)
    assert all(result[key] is None for key in OCP_SMART_ADD_LOG_KEYS)
    assert result["errors"]["_input"]


# ---------------------------------------------------------------- real-world samples
# Third-party captures in ../shared/real-world-outputs (never copied into the repo):
# read in place when the folder exists, skipped otherwise.
def real_world(name):
    if not os.path.isdir(REAL_WORLD):
        pytest.skip("real-world outputs folder absent: %s" % REAL_WORLD)
    with open(os.path.join(REAL_WORLD, name)) as handle:
        return handle.read()


def blocks(text):
    """Split a multi-sample file on its '##########' separator lines."""
    return re.split(r"^#{6,}.*$", text, flags=re.M)[1:]


REAL_LIST_CASES = [
    ("netdata_nvme_list_v2.11_seagate_firecuda530.json", "nested", 3, 2, {
        "device": "/dev/nvme2n1", "generic_path": "/dev/ng2n1", "controller": "nvme2",
        "subsystem": "nvme-subsys2", "serial": "7VS00KNX", "firmware": "SU6SM001",
        "model": "Seagate FireCuda 530 ZP4000GM30023", "transport": "pcie", "address": "0000:61:00.0",
        "nsid": 1, "size_bytes": 4000787030016, "sector_size": 512}),
    ("netdata_nvme_list_v2.3_seagate_firecuda530.json", "flat", 2, 1, {
        "device": "/dev/nvme1n1", "serial": "XXX01YYY", "nsid": 1, "size_bytes": 4000787030016,
        "controller": None, "generic_path": None}),
    ("ocpautoval_nvme_list_v1x_sanitized.json", "flat", 1, 0, {
        "device": "/dev/nvme0n1", "nsid": 1, "sector_size": 4096, "used_bytes": 366898667520,
        "size_bytes": 512110190592, "firmware": "X123"}),
]


@pytest.mark.parametrize("name, layout, count, index, expected", REAL_LIST_CASES)
def test_real_world_nvme_list(name, layout, count, index, expected):
    result = parse_nvme_list(real_world(name))
    assert (result["layout"], len(result["devices"]), result["errors"]) == (layout, count, {})
    subset(result["devices"][index], expected)


def test_real_world_nvme_list_empty_and_text():
    assert parse_nvme_list(real_world("netdata_nvme_list_empty.json")) == {
        "layout": "empty", "devices": [], "errors": {}}
    text_list = parse_nvme_list(real_world("ocpautoval_nvme_list_text_samsung_pm983_x6.txt"))
    assert text_list["devices"] is None and text_list["errors"]["_input"]


REAL_SMART_CASES = [
    ("crusoe_smart_log_v2.11_critwarn_object_3sensors.json", {
        "critical_warning": 0, "critical_warning_bits": NO_WARNINGS, "temperature_c": 23,
        "sensors_c": [29, 25, 23], "power_on_hours": 907, "unsafe_shutdowns": 24}),
    ("netdata_smart_log_v2.11_seagate_firecuda530.json", {
        "critical_warning": 0, "temperature_c": 51, "percentage_used": 30,
        "thm_temp1_trans_count": 3, "thm_temp1_total_time_s": 1474, "thm_temp2_trans_count": 0,
        "num_err_log_entries": 212, "data_units_written": 1928683480}),
    ("netdata_smart_log_v2.3_seagate_firecuda530.json", {
        "temperature_c": 37, "available_spare_threshold_pct": 5, "percentage_used": 2,
        "data_units_written": 136157684, "num_err_log_entries": 110}),
    ("netdata_smart_log_floatvariant.json", {
        "temperature_c": 37, "available_spare_threshold_pct": 5, "percentage_used": 2,
        "data_units_written": 136157684, "num_err_log_entries": 110, "power_on_hours": 4974}),
    ("netdata_smart_log_stringvariant.json", {
        "critical_warning": 0, "temperature_c": 37, "percentage_used": 2,
        "data_units_written": 136157684, "num_err_log_entries": 110, "power_on_hours": 4974}),
    ("ocpautoval_smart_log_v1x_handedited.json", {
        "critical_warning": 0, "critical_warning_bits": NO_WARNINGS, "temperature_c": 33,
        "sensors_c": [33], "power_on_hours": 1244}),
]


@pytest.mark.parametrize("name, expected", REAL_SMART_CASES)
def test_real_world_smart_log(name, expected):
    result = parse_smart_log(real_world(name))
    subset(result, expected)
    assert result["errors"] == {}
    assert isinstance(result["data_units_written"], int) and not isinstance(result["data_units_written"], bool)


@pytest.mark.parametrize("name, expected", [
    ("ironic_id_ctrl_v1x_wdc_sn730.json", {
        "model": "WDC PC SN730 SDBQNTY-256G-1001", "serial": "1951B3444502", "firmware": "11170101",
        "vendor_id": 5559, "mdts": 7, "mdts_bytes": 524288, "wctemp_c": 84, "cctemp_c": 88,
        "mntmt_c": 0, "mxtmt_c": 84, "hctma": True, "sqes_min_bytes": 64, "cqes_min_bytes": 16, "nn": 1,
        "subnqn": "nqn.2018-01.com.wdc:guid:E8238FA6BF53-0001-001B444A44C72385", "errors": {}}),
    ("ocpautoval_id_ctrl_v1x_samsung_pm983_mz1lb960.json", {
        "model": "Unknown MZ1LB960HAJQ-000FB", "serial": "S43ANA0M405593", "mdts": 9,
        "mdts_bytes": 2097152, "wctemp_c": 80, "cctemp_c": 92, "mntmt_c": None, "hctma": False,
        "subnqn": None, "errors": {}}),
])
def test_real_world_id_ctrl(name, expected):
    subset(parse_id_ctrl(real_world(name)), expected)


@pytest.mark.parametrize("name, expected", [
    ("netdata_smartctl_aj_nvme_seagate_firecuda530.json", {
        "model": "Seagate FireCuda 530 ZP4000GM30023", "temperature_c": 39, "power_on_hours": 3113,
        "smart_passed": True, "thm_temp1_trans_count": None}),
    ("telegraf_smartctl_aj_nvme_sabrent_rocket4.json", {
        "model": "Sabrent Rocket 4.0 1TB", "temperature_c": 48, "available_spare_threshold_pct": 5,
        "percentage_used": 4, "num_err_log_entries": 4871, "sensors_c": []}),
    ("scrutiny_smartctl_aj_nvme_intel_660p.json", {
        "model": "INTEL SSDPEKNW010T8", "temperature_c": 36, "power_on_hours": 2401}),
    ("scrutiny_smartctl_aj_nvme_corsair_mp510.json", {
        "model": "Force MP510", "temperature_c": 38, "num_err_log_entries": 8382}),
    ("scrutiny_smartctl_aj_nvme_samsung_970evo_media_errors.json", {
        "model": "Samsung SSD 970 EVO 500GB", "media_errors": 7, "sensors_c": [35, 39],
        "available_spare_pct": 99}),
])
def test_real_world_smartctl(name, expected):
    result = parse_smartctl_json(real_world(name))
    subset(result, expected)
    assert result["errors"] == {}


def test_real_world_smartctl_info_only_and_text():
    info = parse_smartctl_json(real_world("scrutiny_smartctl_info_nvme_kioxia_cd6.json"))
    assert (info["model"], info["serial"], info["temperature_c"]) == ("KCD61LUL3T84", "61Q0A05UT7B8", None)
    assert "nvme_smart_health_information_log" in info["errors"]
    text = parse_smartctl_json(real_world("telegraf_smartctl_text_nvme_transcend_8tempsensors.txt"))
    assert text["temperature_c"] is None and text["errors"]["_input"]


@pytest.mark.parametrize("name", [
    "telegraf_nvme_intel_smart_log_add_text.txt",
    "telegraf_nvme_intel_smart_log_add_deprecated_text.txt",
])
def test_real_world_vendor_text_logs_are_refused_not_misread(name):
    result = parse_smart_log(real_world(name))
    assert all(result[key] is None for key in SMART_LOG_KEYS)
    assert result["errors"]["_input"]


def test_real_world_ocp_smart_add_log():
    result = parse_ocp_smart_add_log(real_world("ocpautoval_ocp_smart_add_log_c0.json"))
    subset(result, {"physical_media_written_bytes": 39074645999616,
                    "physical_media_read_bytes": 36265469677568, "thermal_throttling_events": 0,
                    "throttling_status": 0, "capacitor_health_pct": 100, "plp_start_count": 287,
                    "log_page_version": 2, "errors": {}})


def test_real_world_get_feature_num_queues():
    text = real_world("get_feature_0x7_num_queues_real_outputs.txt")
    samples = re.findall(r"(get-feature:\S+ \(Number of Queues\), Current value:\S+[^\n]*"
                         r"(?:\n\s+Number of IO [^\n]*)*)", text)
    parsed = [parse_get_feature_num_queues(sample) for sample in samples]
    assert [(p["submission_queues"], p["completion_queues"]) for p in parsed] == [
        (8, 8), (65, 65), (16, 16), (63, 63), (64, 64), (31, 31), (64, 64)]
    for sample, result in zip(samples, parsed):
        assert result["errors"] == {}
        nsqa = re.search(r"\(NSQA\): (\d+)", sample)
        if nsqa:  # -H output states the decoded count: it must agree
            assert result["submission_queues"] == int(nsqa.group(1))


def test_real_world_issue_excerpts():
    smartctl, id_ctrl_text, lists = blocks(real_world("issue_excerpts_smartctl_and_nvmecli_text.txt"))
    # smartctl 7.5 JSON cut off mid-document: refused cleanly
    truncated = parse_smartctl_json(smartctl)
    assert truncated["temperature_c"] is None and truncated["errors"]["_input"]
    # nvme-cli 1.x id-ctrl TEXT (not -o json): refused, not misread
    assert parse_id_ctrl(id_ctrl_text)["errors"]["_input"]
    v210, v211 = lists.split("# nvme-cli 2.11")
    flat = parse_nvme_list(v210)
    assert flat["layout"] == "flat" and flat["errors"] == {}
    subset(flat["devices"][0], {"device": "/dev/nvme0n1", "generic_path": "/dev/ng0n1",
                                "model": "Samsung SSD 980 500GB", "used_bytes": 46430703616,
                                "size_bytes": 500107862016, "sector_size": 512, "nsid": 1})
    cut = parse_nvme_list(v211)
    assert cut["layout"] is None and cut["errors"]["_input"]
