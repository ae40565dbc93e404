# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fio fixtures are real fio 3.33 runs made for this collection on a scratch file:

* fio-3.33_iouring_write_qd16_psync_randread.json: job 1 sequential 1 MiB writes,
  io_uring, iodepth=16, O_DIRECT, 64 MiB; job 2 128 KiB random reads, psync.
* fio-3.33_job_error_with_preamble.txt: stdout+stderr of a run whose second job
  points at a missing directory: fio prints "fio: pid=0, err=2/..." before the JSON.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest


from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio import (
    DIRECTION_KEYS,
    FIO_KEYS,
    IODEPTH_BUCKETS,
    JOB_KEYS,
    parse_fio_json,
)
from helpers import fixture as _fixture


def fixture(name):
    return _fixture('fio', name)


REAL_RUN = "fio-3.33_iouring_write_qd16_psync_randread.json"
ERROR_RUN = "fio-3.33_job_error_with_preamble.txt"


def test_parse_fio_json_real_run():
    result = parse_fio_json(fixture(REAL_RUN))
    assert sorted(result) == sorted(FIO_KEYS + ("errors",))
    assert result["errors"] == {}
    assert result["fio_version"] == "fio-3.33"
    write_job, read_job = result["jobs"][0], result["jobs"][1]
    assert sorted(write_job) == sorted(JOB_KEYS)
    assert sorted(write_job["write"]) == sorted(DIRECTION_KEYS)
    assert write_job["name"] == "ckpt-write" and write_job["error"] == 0
    assert write_job["write"]["bw_bytes"] == 1636801560
    assert write_job["write"]["io_bytes"] == 64 * 1024 * 1024
    assert write_job["write"]["clat_p99_ns"] == 16711680
    assert write_job["write"]["runtime_ms"] > 0 and write_job["write"]["iops"] > 0
    assert write_job["read"]["io_bytes"] == 0 and write_job["read"]["bw_bytes"] == 0
    assert write_job["iodepth_level"] == {"1": 1.5625, "2": 3.125, "4": 6.25, "8": 12.5,
                                          "16": 76.5625, "32": 0.0, ">=64": 0.0}
    assert write_job["iodepth_max_achieved"] == "16"
    assert read_job["name"] == "ckpt-randread"
    assert read_job["read"]["bw_bytes"] == 691843958
    assert read_job["read"]["lat_mean_ns"] == pytest.approx(187605.513672)
    assert read_job["iodepth_max_achieved"] == "1"
    assert result["disk_util"][0]["name"] == "vda"
    assert result["disk_util"][0]["util"] == pytest.approx(23.434343)
    assert result["disk_util"][0]["write_ios"] == 44


def test_parse_fio_json_skips_preamble_and_reports_job_error():
    result = parse_fio_json(fixture(ERROR_RUN))
    assert result["errors"] == {}
    good, bad = result["jobs"][0], result["jobs"][1]
    assert good["error"] == 0 and good["write"]["io_bytes"] == 16 * 1024 * 1024
    assert bad["name"] == "ckpt-bad" and bad["error"] == 2
    assert bad["iodepth_max_achieved"] is None  # nothing was ever in flight


def test_parse_fio_json_io_u_error_lines_and_trailing_text():
    text = ("fio: io_u error on file /mnt/ckpt/f.0: No space left on device: write offset=0, buflen=1048576\n"
            "fio: io_u error on file /mnt/ckpt/f.0: No space left on device: write offset=1048576, buflen=1048576\n"
            + fixture(REAL_RUN) + "\nfio: file hash not empty on exit\n")
    result = parse_fio_json(text)
    assert result["errors"] == {}
    assert result["jobs"][0]["write"]["bw_bytes"] == 1636801560


@pytest.mark.parametrize("levels, deepest", [
    ({"1": 0.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.1, ">=64": 99.9}, ">=64"),
    ({"1": 100.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0}, "1"),
    ({"1": 0.1, "2": 0.1, "4": 0.2, "8": 99.6, "16": 0.0, "32": 0.0, ">=64": 0.0}, "8"),
    ({"1": 0.0}, None),
])
def test_iodepth_max_achieved(levels, deepest):
    doc = json.loads(fixture(REAL_RUN))
    doc["jobs"][0]["iodepth_level"] = levels
    assert parse_fio_json(json.dumps(doc))["jobs"][0]["iodepth_max_achieved"] == deepest
    assert set(IODEPTH_BUCKETS) >= set(levels)


def test_parse_fio_json_fio2_units():
    doc = {"fio version": "fio-2.2.10", "jobs": [{
        "jobname": "old", "error": 0,
        "write": {"io_bytes": 65536, "bw": 1024, "iops": 256.0, "runtime": 250,
                  "clat": {"mean": 10.5, "percentile": {"99.000000": 20}}, "lat": {"mean": 12.0}},
        "read": {"io_bytes": 0, "bw": 0, "iops": 0, "runtime": 0, "clat": {}, "lat": {}},
    }]}
    write = parse_fio_json(json.dumps(doc))["jobs"][0]["write"]
    assert write == {"bw_bytes": 1024 * 1024, "iops": 256.0, "runtime_ms": 250, "io_bytes": 65536,
                     "clat_p99_ns": 20000, "lat_mean_ns": 12000.0}


def test_parse_fio_json_wrong_types_cost_one_field():
    doc = json.loads(fixture(REAL_RUN))
    doc["jobs"][0]["write"]["bw_bytes"] = "fast"
    doc["jobs"][0]["write"]["iops"] = None
    doc["disk_util"][0]["util"] = "busy"
    result = parse_fio_json(json.dumps(doc))
    write = result["jobs"][0]["write"]
    assert write["bw_bytes"] is None and write["iops"] is None
    assert write["io_bytes"] == 64 * 1024 * 1024
    assert result["disk_util"][0]["util"] is None
    assert set(result["errors"]) == {"jobs[0].write.bw_bytes", "disk_util[0].util"}


@pytest.mark.parametrize("text", [
    None, "", "fio: pid=0, err=22/file:filesetup.c:1155, func=total_file_size, error=Invalid argument\n",
    '{"fio version": "fio-3.33", "jobs": [', '{"not": "fio"}', "[1, 2]", 12,
])
def test_parse_fio_json_bad_input(text):
    result = parse_fio_json(text)
    assert all(result[key] is None for key in FIO_KEYS)
    assert result["errors"]["_input"]


def test_the_heartbeat_covers_three_poll_rounds_over_the_fleet():
    """A fixed heartbeat (60 s, or the modules' 300 s default) ended every node's write on a fleet whose poll round
    takes longer (1,000 hosts, 5 forks, 10 s polls: 200 batches, 3,000 s a round) - found with issue 31's heartbeat
    (test failed before: no such function, a minute for every run of the verification)."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_job import heartbeat_for
    assert heartbeat_for(1, 2, 5) == 30  # the lab: half a minute
    assert heartbeat_for(15, 2, 5) == 90  # six polls
    assert heartbeat_for(10, 1000, 5) == 9000  # three rounds of 200 batches x 15 s
    assert heartbeat_for(10, 1000, 50) == 900
    assert heartbeat_for(60, 100000, 5) == 86400  # capped
    assert heartbeat_for(0, 0, 0) == 30
    assert heartbeat_for(4, 2, 5) == 30 and heartbeat_for(6, 2, 5) == 36  # six polls
