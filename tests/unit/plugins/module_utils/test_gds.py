# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from conftest import REAL_WORLD

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds import (
    CUFILE_DEFAULTS,
    CUFILE_KEYS,
    GDSCHECK_KEYS,
    NVFS_STATS_KEYS,
    READ_KEYS,
    WRITE_KEYS,
    driver_status,
    parse_cufile_json,
    parse_gdscheck,
    parse_nvidia_fs_stats,
)
from helpers import fixture as _fixture, subset


def fixture(name):
    return _fixture('gds', name)


# ---------------------------------------------------------------- gdscheck -p
GDSCHECK_CASES = [
    ("gdscheck_p_v1.13_nvme_supported.txt", {
        "gds_version": "1.13.1.3", "nvidia_fs_version": "2.22", "libcufile_version": "2.12",
        "nvme_supported": True, "nvme_modes": [], "use_compat_mode": False, "iommu_enabled": False,
        "errors": {},
    }),
    ("gdscheck_p_v1.16_mode_lists.txt", {
        "gds_version": "1.16.0.12", "nvidia_fs_version": "2.28",
        "nvme_supported": True, "nvme_modes": ["nvfs", "compat"], "use_compat_mode": True,
        "iommu_enabled": True, "errors": {},
    }),
    ("gdscheck_p_v1.0_unsupported_compat.txt", {
        "gds_version": "1.0.1.3", "nvidia_fs_version": "2.7", "libcufile_version": "2.4",
        "nvme_supported": False, "nvme_modes": [], "use_compat_mode": True, "iommu_enabled": False,
        "errors": {},
    }),
]


@pytest.mark.parametrize("name, expected", GDSCHECK_CASES)
def test_parse_gdscheck_versions(name, expected):
    result = parse_gdscheck(fixture(name))
    assert sorted(result) == sorted(GDSCHECK_KEYS + ("errors",))
    subset(result, expected)


def test_parse_gdscheck_details_v1_13():
    result = parse_gdscheck(fixture("gdscheck_p_v1.13_nvme_supported.txt"))
    assert result["drivers"]["NVMe P2PDMA"] == {"supported": False, "modes": [], "raw": "Unsupported"}
    assert result["drivers"]["NVMeOF"]["supported"] is True
    assert result["drivers"]["Userspace RDMA"]["supported"] is True
    assert result["driver_options"] == {
        "Mellanox PeerDirect": "Enabled", "rdma library": "Loaded (libcufile_rdma.so)",
        "rdma devices": "Configured", "rdma_device_status": "Up: 2 Down: 0"}
    props = result["properties"]
    subset(props, {
        "execution.max_io_queue_depth": 256, "execution.max_io_threads": 8,
        "execution.parallel_io": True, "properties.max_direct_io_size_kb": 16384,
        "properties.posix_pool_slab_size_kb": [4, 1024, 16384],
        "properties.rdma_peer_affinity_policy": "RoundRobin", "fs.lustre.posix_gds_min_kb": 0,
        "fs.gpfs.gds_async_support": True, "properties.force_compat_mode": False,
    })
    assert len(result["gpus"]) == 4
    assert result["gpus"][3] == {"index": 3, "name": "NVIDIA H100 80GB HBM3", "bar": 1,
                                 "bar_size_mib": 131072, "supports_gds": True, "iommu_enabled": False}
    subset(result["platform"], {"IOMMU": "disabled", "Cuda Driver Version Installed": 12080})


def test_parse_gdscheck_v1_16_mode_lists():
    result = parse_gdscheck(fixture("gdscheck_p_v1.16_mode_lists.txt"))
    drivers = result["drivers"]
    assert drivers["NVMe"] == {"supported": True, "modes": ["nvfs", "compat"], "raw": "nvfs, compat"}
    assert drivers["NVMe P2PDMA"] == {"supported": True, "modes": ["p2p", "compat"], "raw": "p2p, compat"}
    # compat alone is the POSIX fallback, not GPUDirect
    assert drivers["NVMeOF"] == {"supported": False, "modes": ["compat"], "raw": "compat"}
    assert result["gpus"][0]["iommu_enabled"] is True
    assert result["gpus"][0]["bar_size_mib"] == 262144


def test_parse_gdscheck_old_gpu_line_without_iommu():
    gpu = parse_gdscheck(fixture("gdscheck_p_v1.0_unsupported_compat.txt"))["gpus"][0]
    assert gpu == {"index": 0, "name": "Tesla V100-SXM2-32GB", "bar": 1, "bar_size_mib": 32768,
                   "supports_gds": True, "iommu_enabled": None}


def test_parse_gdscheck_truncated():
    result = parse_gdscheck(fixture("gdscheck_p_truncated.txt"))
    subset(result, {"gds_version": "1.14.0.30", "nvme_supported": False, "use_compat_mode": None,
                    "properties": {}, "gpus": [], "iommu_enabled": None})
    assert set(result["errors"]) == {"cufile", "gpus", "platform"}
    assert result["drivers"]["NVMeOF"]["supported"] is None  # "Unsupp" cut short: unknown, not guessed


def test_parse_gdscheck_fragment_without_headers():
    text = " NVMe               : Unsupported\n properties.use_compat_mode : true\n"
    result = parse_gdscheck(text)
    subset(result, {"nvme_supported": False, "use_compat_mode": True, "gds_version": None})


@pytest.mark.parametrize("raw, expected", [
    ("Supported", (True, [])), ("Unsupported", (False, [])), ("nvfs, compat", (True, ["nvfs", "compat"])),
    ("compat", (False, ["compat"])), ("p2p", (True, ["p2p"])), ("Enabled", (True, [])),
    ("compat, warp", (None, ["compat", "warp"])), ("Unsupp", (None, ["unsupp"])),
])
def test_driver_status(raw, expected):
    status = driver_status(raw)
    assert (status["supported"], status["modes"]) == expected
    assert status["raw"] == raw


@pytest.mark.parametrize("text", [None, "", "   ", "random words\nwith no colons", 5])
def test_parse_gdscheck_bad_input(text):
    result = parse_gdscheck(text)
    assert all(result[key] is None for key in GDSCHECK_KEYS)
    assert result["errors"]["_input"]


# ---------------------------------------------------------------- cufile.json
def test_parse_cufile_json_comments_trailing_commas_and_defaults():
    result = parse_cufile_json(fixture("cufile_commented.json"))
    assert sorted(result) == sorted(CUFILE_KEYS + ("errors",))
    assert result["errors"] == {}
    props = result["properties"]
    subset(props, {
        # set in the file
        "execution.max_io_queue_depth": 256, "execution.max_io_threads": 8,
        "execution.max_request_parallelism": 8, "properties.allow_compat_mode": False,
        "profile.cufile_stats": 1, "logging.level": "ERROR",
        "properties.rdma_dev_addr_list": ["192.0.2.11", "192.0.2.12"],
        # strings keep their comment-looking content
        "properties.note": "comment markers inside strings are data: // and /* stay",
        "properties.url": "http://example.invalid/a//b",
        # defaults for what the file leaves out (min_io_threshold_size_kb is commented out)
        "execution.min_io_threshold_size_kb": 8192, "properties.max_device_cache_size_kb": 131072,
        "properties.max_device_pinned_mem_size_kb": 33554432, "properties.use_poll_mode": False,
        "properties.poll_mode_max_size_kb": 4, "properties.force_compat_mode": False,
    })
    assert "execution.min_io_threshold_size_kb" not in result["set"]
    assert "execution.max_io_queue_depth" in result["set"]
    assert result["set"] == sorted(result["set"])
    assert result["raw"]["execution"]["parallel_io"] is True


def test_parse_cufile_json_empty_object_gives_documented_defaults():
    result = parse_cufile_json("{}")
    assert result["properties"] == CUFILE_DEFAULTS
    assert result["set"] == [] and result["errors"] == {}


def test_parse_cufile_json_wrong_types():
    result = parse_cufile_json(fixture("cufile_wrong_types.json"))
    props = result["properties"]
    for key in ("execution.max_io_queue_depth", "execution.max_io_threads", "execution.parallel_io",
                "properties.use_poll_mode"):
        assert props[key] is None
        assert key in result["errors"]
    assert props["properties.max_direct_io_size_kb"] == 8192
    assert props["execution.max_request_parallelism"] == 4


@pytest.mark.parametrize("text", [None, "", "// only a comment\n", "{\"a\": ", "[1, 2]", "{'single': 1}", 3])
def test_parse_cufile_json_bad_input(text):
    result = parse_cufile_json(text)
    assert all(result[key] is None for key in CUFILE_KEYS)
    assert result["errors"]["_input"]


# ---------------------------------------------------------------- nvidia-fs stats
def test_parse_nvidia_fs_stats_enabled():
    result = parse_nvidia_fs_stats(fixture("nvidia_fs_stats_enabled_after_writes.txt"))
    assert sorted(result) == sorted(NVFS_STATS_KEYS + ("errors",))
    subset(result, {"gds_version": "1.13.1.3", "nvfs_version": "2.22.3", "io_stats_enabled": True,
                    "peer_io_stats_enabled": False, "errors": {}})
    assert result["reads"] == {"n": 1024, "ok": 1024, "err": 0, "mib": 16384, "io_state_err": 0,
                               "bandwidth_mib_s": 6710, "avg_latency_us": 2380}
    assert result["writes"] == {"n": 8192, "ok": 8190, "err": 2, "mib": 131072, "io_state_err": 0,
                                "bandwidth_mib_s": 9822, "avg_latency_us": 1611, "pg_cache": 0,
                                "pg_cache_fail": 0, "pg_cache_eio": 0}
    assert result["counters"]["bar1_map"]["delay_frees"] == 0
    assert result["counters"]["batches"]["avg_submit_latency_us"] == 0
    assert result["gpus"][1] == {"pci": "0000:2a:00.0", "uuid": "66666666-7777-8888-9999-000000000000",
                                 "registered_mib": 2048, "cache_mib": 128, "max_pinned_mib": 2048,
                                 "cross_root_port": 0}


def test_parse_nvidia_fs_stats_disabled_hides_counters_as_none():
    result = parse_nvidia_fs_stats(fixture("nvidia_fs_stats_disabled_default.txt"))
    assert result["io_stats_enabled"] is False
    assert sorted(result["reads"]) == sorted(READ_KEYS)
    assert sorted(result["writes"]) == sorted(WRITE_KEYS)
    assert result["reads"]["ok"] is None and result["reads"]["mib"] is None
    assert result["reads"]["err"] == 0
    assert result["writes"]["err"] == 1 and result["writes"]["n"] is None
    assert result["counters"]["mmap"] == {"n": 2, "ok": 2, "err": 0, "munmap": 2}
    assert result["counters"]["ops"] == {"read": 0, "write": 0, "batchio": 0}
    assert result["gpus"][0]["max_pinned_mib"] == 1


@pytest.mark.parametrize("text", [None, "", "cat: /proc/driver/nvidia-fs/stats: No such file or directory", 1])
def test_parse_nvidia_fs_stats_bad_input(text):
    result = parse_nvidia_fs_stats(text)
    assert all(result[key] is None for key in NVFS_STATS_KEYS)
    assert result["errors"]["_input"]


# ---------------------------------------------------------------- real-world samples
def real_world(name):
    if not os.path.isdir(REAL_WORLD):
        pytest.skip("real-world outputs folder absent: %s" % REAL_WORLD)
    with open(os.path.join(REAL_WORLD, name)) as handle:
        return handle.read()


def test_real_world_gdscheck_v1_14_supported():
    result = parse_gdscheck(real_world("stelline_gdscheck_p_v1.14_puget_wrx90_2xRTX6000Ada.txt"))
    subset(result, {"gds_version": "1.14.0.30", "nvidia_fs_version": "2.24", "libcufile_version": "2.12",
                    "nvme_supported": True, "use_compat_mode": False, "iommu_enabled": False, "errors": {}})
    assert result["drivers"]["NVMe P2PDMA"]["supported"] is False
    subset(result["properties"], {"execution.max_io_queue_depth": 128, "execution.max_io_threads": 4,
                                  "properties.posix_pool_slab_count": [128, 64, 64],
                                  "properties.prefer_iouring": False})
    assert [(g["index"], g["name"], g["bar_size_mib"], g["supports_gds"]) for g in result["gpus"]] == [
        (0, "NVIDIA RTX 6000 Ada Generation", 65536, True), (1, "NVIDIA RTX 6000 Ada Generation", 65536, True)]
    assert result["platform"]["Cuda Driver Version Installed"] == 12090


def test_real_world_gdscheck_and_stats_issue_excerpts():
    text = real_world("gdscheck_p_and_nvidia_fs_stats_issue_excerpts.txt")
    gds_1_0, h200, fragment, stats_enabled, stats_disabled = re.split(r"^#{6,}.*$", text, flags=re.M)[1:]

    old = parse_gdscheck(gds_1_0)
    subset(old, {"gds_version": "1.0.1.3", "nvidia_fs_version": "2.7", "libcufile_version": "2.4",
                 "nvme_supported": True, "use_compat_mode": True})
    assert old["drivers"]["NVMeOF"]["supported"] is True
    assert old["properties"]["properties.posix_pool_slab_size_kb"] == [4, 1024, 16384]
    assert set(old["errors"]) == {"gpus", "platform"}  # excerpt ends inside CUFILE CONFIGURATION

    unsupported = parse_gdscheck(h200)
    subset(unsupported, {"gds_version": "1.14.0.30", "nvidia_fs_version": "2.27", "nvme_supported": False,
                         "use_compat_mode": None})
    assert unsupported["drivers"]["NVMe P2PDMA"]["supported"] is False
    assert "(cufile.log in same issue" not in unsupported["drivers"]

    partial = parse_gdscheck(fragment)
    subset(partial, {"nvme_supported": False, "use_compat_mode": True})
    assert partial["properties"]["properties.force_compat_mode"] is False

    enabled = parse_nvidia_fs_stats(stats_enabled)
    subset(enabled, {"gds_version": "1.10.0.4", "nvfs_version": "2.20.5", "io_stats_enabled": True})
    assert enabled["reads"]["ok"] == 0 and enabled["reads"]["bandwidth_mib_s"] == 0
    assert enabled["gpus"][0]["pci"] == "0000:8b:00.0"

    disabled = parse_nvidia_fs_stats(stats_disabled)
    subset(disabled, {"gds_version": "1.7.2.11", "nvfs_version": "2.17.5", "io_stats_enabled": False,
                      "peer_io_stats_enabled": True, "gpus": [], "errors": {}})
    assert disabled["reads"]["ok"] is None and disabled["reads"]["err"] == 0


def test_real_world_nvidia_fs_stats_disabled():
    result = parse_nvidia_fs_stats(real_world("stelline_proc_driver_nvidia-fs_stats_v2.25.7.txt"))
    subset(result, {"gds_version": "1.14.0.31", "nvfs_version": "2.25.7", "io_stats_enabled": False,
                    "errors": {}})
    assert result["writes"]["mib"] is None and result["writes"]["err"] == 0
    assert result["counters"]["mmap"] == {"n": 1, "ok": 1, "err": 0, "munmap": 2}
    assert result["gpus"] == [{"pci": "0000:01:00.0", "uuid": "fb1e6550-2a78-d767-1f0d-7512eb8c552d",
                               "registered_mib": 0, "cache_mib": 0, "max_pinned_mib": 1}]
