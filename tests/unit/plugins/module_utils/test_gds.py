# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from testenv import REAL_WORLD

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import (
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
        "nvidia_fs_min_version": None, "nvme_supported": True, "nvme_modes": [], "use_compat_mode": False,
        "iommu_enabled": False, "open_kernel_module": True, "environment": {}, "unrecognised": [], "errors": {},
    }),
    ("gdscheck_p_v1.16_mode_lists.txt", {
        "gds_version": "1.16.0.12", "nvidia_fs_version": "2.28",
        "nvme_supported": True, "nvme_modes": ["nvfs", "compat"], "use_compat_mode": True,
        "iommu_enabled": True, "open_kernel_module": None, "unrecognised": [], "errors": {},
    }),
    ("gdscheck_p_v1.0_unsupported_compat.txt", {
        "gds_version": "1.0.1.3", "nvidia_fs_version": "2.7", "libcufile_version": "2.4",
        "nvme_supported": False, "nvme_modes": [], "use_compat_mode": True, "iommu_enabled": False,
        "unrecognised": [], "errors": {},
    }),
    ("gdscheck_p_v1.0_pasted_prompt.txt", {
        "gds_version": "1.0.0.82", "nvidia_fs_version": "2.7", "libcufile_version": "2.4",
        "nvidia_fs_min_version": None, "nvme_supported": True, "use_compat_mode": False,
        "open_kernel_module": None, "unrecognised": [], "errors": {},
    }),
    ("gdscheck_p_v1.14_p2pdma_no_nvidia_fs.txt", {
        "gds_version": "1.14.1.1", "nvidia_fs_version": None, "libcufile_version": "2.12",
        "nvidia_fs_min_version": None, "nvme_supported": False, "use_compat_mode": True,
        "open_kernel_module": True, "environment": {"CUFILE_ENV_PATH_JSON": "/opt/ckpt/cufile.json"},
        "unrecognised": [], "errors": {},
    }),
    ("gdscheck_p_v1.16_min_version_dmabuf.txt", {
        "gds_version": "1.16.1.26", "nvidia_fs_version": "2.27", "nvidia_fs_min_version": "2.12",
        "libcufile_version": None, "nvme_supported": True, "nvme_modes": ["dmabuf", "compat"],
        "use_compat_mode": False, "iommu_enabled": False, "open_kernel_module": True, "unrecognised": [],
        "errors": {},
    }),
    ("gdscheck_p_v1.18_no_gpu_compat_only.txt", {
        "gds_version": "1.18.0.4", "nvidia_fs_version": None, "nvidia_fs_min_version": "2.12",
        "libcufile_version": None, "nvme_supported": False, "nvme_modes": ["compat"], "use_compat_mode": None,
        "gpus": [], "unrecognised": ["No GPU found in the system, use this library only for sysmem"],
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


def test_parse_gdscheck_v1_16_min_version_dmabuf_environment():
    result = parse_gdscheck(fixture("gdscheck_p_v1.16_min_version_dmabuf.txt"))
    drivers = result["drivers"]
    assert drivers["NVMe"] == {"supported": True, "modes": ["dmabuf", "compat"], "raw": "dmabuf, compat"}
    assert drivers["NVMe P2PDMA"] == {"supported": True, "modes": ["p2pdma"], "raw": "p2pdma"}
    assert drivers["NVMeOF"]["supported"] is True and drivers["SCSI"]["supported"] is False
    assert result["driver_options"]["DmaBuf support"] == "Enabled"
    assert result["environment"] == {"CUFILE_LOGGING_LEVEL": "TRACE", "CUFILE_ENV_PATH_JSON": "/etc/ckpt/cufile.json"}
    subset(result["properties"], {"block.nvme.use_pci_p2pdma": True, "block.raid.use_pci_p2pdma": False,
                                  "fs.nfs.use_pci_p2pdma": False})
    assert result["platform"] == {
        "arch": "x86_64", "IOMMU": "disabled", "Nvidia Driver Info Status": "Supported(Nvidia Open Driver Installed)",
        "Cuda Driver Version Installed": 13000, "verification": "succeeded",
        "Platform": "Example Systems NX-2, Arch: x86_64(Linux 6.11.0-29-generic)"}
    assert [gpu["name"] for gpu in result["gpus"]] == ["NVIDIA H100 NVL", "NVIDIA H100 NVL"]


def test_parse_gdscheck_v1_14_p2pdma_without_nvidia_fs():
    """P2PDMA systems need no nvidia_fs: gdscheck prints "libcufile version" on its own line."""
    result = parse_gdscheck(fixture("gdscheck_p_v1.14_p2pdma_no_nvidia_fs.txt"))
    assert result["drivers"]["NVMe P2PDMA"] == {"supported": True, "modes": [], "raw": "Supported"}
    assert result["drivers"]["NVMe"]["supported"] is False
    assert result["properties"]["properties.use_pci_p2pdma"] is True
    assert result["platform"]["arch"] == "x86_64"


def test_parse_gdscheck_pasted_prompts_are_not_fields():
    result = parse_gdscheck(fixture("gdscheck_p_v1.0_pasted_prompt.txt"))
    assert result["platform"] == {"IOMMU": "disabled", "verification": "succeeded"}
    assert [gpu["bar_size_mib"] for gpu in result["gpus"]] == [65536, 65536]


@pytest.mark.parametrize("prompt", [
    "$ gdscheck -p", "sonata@host:~$ /usr/local/cuda/gds/tools/gdscheck -p",
    "$ sonata@host:~$ /usr/local/cuda/gds/tools/gdscheck -p", "[root@node01 tools]# ./gdscheck -p",
    "(base) user@host:~$ sudo /usr/local/cuda/gds/tools/gdscheck -p", "user@host:~$",
    "(venv) user@host:~/ckpt$ time sudo -E /usr/local/cuda-12.8/gds/tools/gdscheck -p",
])
def test_parse_gdscheck_prompt_forms(prompt):
    result = parse_gdscheck("%s\n GDS release version: 1.16.1.26\n NVMe : nvfs, compat\n%s\n" % (prompt, prompt))
    subset(result, {"gds_version": "1.16.1.26", "nvme_supported": True, "unrecognised": [], "platform": {}})


def test_parse_gdscheck_v1_18_min_version_alone_compat_only():
    result = parse_gdscheck(fixture("gdscheck_p_v1.18_no_gpu_compat_only.txt"))
    assert all(entry["supported"] is False for entry in result["drivers"].values())
    subset(result["driver_options"], {"rdma_multipath": "Disabled", "rdma_health_monitor": "Not initialized",
                                      "rdma_dev_addr_list_status": "Up: 0 Down: 0"})
    assert result["platform"] == {"arch": "aarch64"}
    assert set(result["errors"]) == {"cufile", "gpus", "platform"}


def test_parse_gdscheck_v1_16_truncated_mid_line():
    result = parse_gdscheck(fixture("gdscheck_p_v1.16_truncated_mid_line.txt"))
    subset(result, {"gds_version": "1.16.0.49", "nvidia_fs_min_version": "2.12", "nvme_supported": True,
                    "use_compat_mode": True, "gpus": [], "unrecognised": ["properties.max_direct_io_si"]})
    assert result["properties"] == {"properties.use_pci_p2pdma": False, "properties.use_compat_mode": True}
    assert set(result["errors"]) == {"gpus", "platform"}


@pytest.mark.parametrize("line, expected, reported", [
    (" nvidia_fs version:  2.24 libcufile version: 2.12", ("2.24", None, "2.12"), False),
    (" nvidia_fs version:  2.27 nvidia_fs minimum version: 2.12", ("2.27", "2.12", None), False),
    ("nvidia_fs version:  2.27", ("2.27", None, None), False),
    (" libcufile version: 2.12", (None, None, "2.12"), False),
    (" nvidia_fs minimum version: 2.12", (None, "2.12", None), False),
    (" nvidia_fs version:  libcufile version: 2.12", (None, None, "2.12"), False),
    (" nvidia_fs version:  Not Loaded", (None, None, None), True),
    (" nvidia_fs version:  Not Loaded libcufile version: 2.12", (None, None, "2.12"), True),
    (" nvidia_fs version:  2.27 nvidia_fs minim", ("2.27", None, None), True),  # cut short
])
def test_parse_gdscheck_version_lines(line, expected, reported):
    result = parse_gdscheck(" GDS release version: 1.16.1.26\n%s\n NVMe : nvfs, compat\n" % line)
    assert (result["nvidia_fs_version"], result["nvidia_fs_min_version"], result["libcufile_version"]) == expected
    assert result["unrecognised"] == ([line.strip()] if reported else [])


PLATFORM_TEXT = """ GDS release version: 1.16.1.26
 ==============
 PLATFORM INFO:
 ==============
 IOMMU: disabled
%s
 Platform: Example Systems NX-2, Arch: x86_64(Linux 6.11.0-29-generic)
%s
"""


@pytest.mark.parametrize("driver_line, expected", [
    (" Nvidia Driver Info Status: Supported(Nvidia Open Driver Installed)", True),
    (" Nvidia Driver Info Status: Unsupported(Nvidia Proprietary Driver Installed)", False),
    (" Nvidia Driver Info Status: Unsupported(closed source driver)", False),
    (" Nvidia Driver Info Status: Supported", None),
    ("", None),
])
def test_parse_gdscheck_open_kernel_module(driver_line, expected):
    result = parse_gdscheck(PLATFORM_TEXT % (driver_line, " Platform verification succeeded")
                            + " NVMe : nvfs\n")
    assert result["open_kernel_module"] is expected
    assert result["platform"]["verification"] == "succeeded"
    assert result["unrecognised"] == []


def test_parse_gdscheck_platform_verification_error():
    text = PLATFORM_TEXT % ("", " Platform verification error : IOMMU enabled on GPU 0000:41:00.0") + " NVMe : nvfs\n"
    platform = parse_gdscheck(text)["platform"]
    subset(platform, {"verification": "error", "verification_detail": "IOMMU enabled on GPU 0000:41:00.0",
                      "Platform": "Example Systems NX-2, Arch: x86_64(Linux 6.11.0-29-generic)"})
    assert "Platform verification error" not in platform


def test_parse_gdscheck_reports_unrecognised_lines_in_order():
    """Made-up lines that no rule knows, one per section: listed stripped and in order, never dropped."""
    text = """ GDS release version: 1.16.1.26
 a line gdscheck never printed
 ============
 ENVIRONMENT:
 ============
 CUFILE_LOGGING_LEVEL : TRACE
 (inherited from parent) : yes
 =====================
 DRIVER CONFIGURATION:
 =====================
 NVMe               : nvfs, compat
 ... --Mellanox PeerDirect : Disabled
 =====================
 CUFILE CONFIGURATION:
 =====================
 properties.use_compat_mode : true
 properties with spaces : 1
 =========
 GPU INFO:
 =========
 GPU topology unavailable
"""
    result = parse_gdscheck(text)
    assert result["unrecognised"] == [
        "a line gdscheck never printed", "(inherited from parent) : yes", "... --Mellanox PeerDirect : Disabled",
        "properties with spaces : 1", "GPU topology unavailable"]
    assert result["environment"] == {"CUFILE_LOGGING_LEVEL": "TRACE"}
    assert result["driver_options"] == {} and list(result["properties"]) == ["properties.use_compat_mode"]


def test_parse_gdscheck_fragment_environment_line():
    result = parse_gdscheck("CUFILE_ENV_PATH_JSON : /x/cufile.json\n NVMe : Unsupported\n")
    subset(result, {"environment": {"CUFILE_ENV_PATH_JSON": "/x/cufile.json"}, "nvme_supported": False,
                    "unrecognised": []})


@pytest.mark.parametrize("raw, expected", [
    ("Supported", (True, [])), ("Unsupported", (False, [])), ("nvfs, compat", (True, ["nvfs", "compat"])),
    ("compat", (False, ["compat"])), ("p2p", (True, ["p2p"])), ("Enabled", (True, [])),
    ("compat, warp", (None, ["compat", "warp"])), ("Unsupp", (None, ["unsupp"])),
    # GDS 1.16+: dmabuf is the CUDA dma-buf (P2PDMA) path, a GPUDirect mode like nvfs
    ("dmabuf, compat", (True, ["dmabuf", "compat"])), ("p2pdma", (True, ["p2pdma"])),
    ("dmabuf", (True, ["dmabuf"])),
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
                    "peer_io_stats_enabled": False, "stats_version": "4.0", "peerdirect_supported": True,
                    "logging_level": "info", "active_shadow_buffer_mib": 64, "active_processes": 8,
                    "peer_affinity": {}, "unrecognised": [], "errors": {}})
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


def test_parse_nvidia_fs_stats_header_prompts_and_peer_affinity():
    result = parse_nvidia_fs_stats(fixture("nvidia_fs_stats_with_peer_affinity.txt"))
    subset(result, {"gds_version": "1.16.1.26", "stats_version": "4.0", "nvfs_version": "2.27.3",
                    "peerdirect_supported": False, "io_stats_enabled": True, "peer_io_stats_enabled": True,
                    "logging_level": "warn", "active_shadow_buffer_mib": 32, "active_processes": 2,
                    "unrecognised": [], "errors": {}})
    assert result["peer_affinity"] == {"0000:4e:00.0": [0, 0, 2048] + [0] * 13 + [512]}
    assert result["gpus"] == [{"pci": "0000:4e:00.0", "uuid": "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
                               "registered_mib": 1024, "cache_mib": 32, "max_pinned_mib": 1024,
                               "cross_root_port": 12}]
    assert result["reads"]["bandwidth_mib_s"] == 5120 and result["writes"]["mib"] == 32768
    assert result["counters"]["batches"] == {"n": 4, "ok": 4, "err": 0, "avg_submit_latency_us": 41}


def test_parse_nvidia_fs_stats_reports_unrecognised_lines():
    """Made-up lines of a future driver: listed, not dropped; known lines still parse."""
    text = """$ cat /proc/driver/nvidia-fs/stats
GDS Version: 1.16.1.26
NVFS Driver(version: 2.27.3)
IO stats: Disabled, peer IO stats: Disabled
P2P mode: pci_p2pdma
Reads                : err=0 io_state_err=0
Writes               : err=
Fault injection      : enabled
"""
    result = parse_nvidia_fs_stats(text + "(base) ops@gpu-node07:~$ cat /proc/driver/nvidia-fs/peer_affinity\n")
    assert result["unrecognised"] == ["P2P mode: pci_p2pdma", "Writes               : err=",
                                      "Fault injection      : enabled"]
    subset(result, {"nvfs_version": "2.27.3", "io_stats_enabled": False, "writes": None, "errors": {}})
    assert result["reads"]["err"] == 0


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
    assert sorted(disabled["peer_affinity"]) == ["0000:17:00.0", "0000:65:00.0", "0000:ca:00.0", "0000:e3:00.0"]
    assert disabled["peer_affinity"]["0000:ca:00.0"] == [0] * 33


def test_real_world_nvidia_fs_stats_disabled():
    result = parse_nvidia_fs_stats(real_world("stelline_proc_driver_nvidia-fs_stats_v2.25.7.txt"))
    subset(result, {"gds_version": "1.14.0.31", "nvfs_version": "2.25.7", "io_stats_enabled": False,
                    "errors": {}})
    assert result["writes"]["mib"] is None and result["writes"]["err"] == 0
    assert result["counters"]["mmap"] == {"n": 1, "ok": 1, "err": 0, "munmap": 2}
    assert result["gpus"] == [{"pci": "0000:01:00.0", "uuid": "fb1e6550-2a78-d767-1f0d-7512eb8c552d",
                               "registered_mib": 0, "cache_mib": 0, "max_pinned_mib": 1}]


def real_world_names(word):
    if not os.path.isdir(REAL_WORLD):
        pytest.skip("real-world outputs folder absent: %s" % REAL_WORLD)
    return sorted(name for name in os.listdir(REAL_WORLD) if word in name)


def pasted_outputs(text):
    """One file may hold several pasted outputs, each after a '##########' line."""
    return re.split(r"^#{10}.*$", text, flags=re.M)


GDSCHECK_HEADERS = ("ENVIRONMENT:", "DRIVER CONFIGURATION:", "CUFILE CONFIGURATION:", "GPU INFO:", "PLATFORM INFO:")
FIELD_RE = re.compile(r"^(--)?[A-Za-z][\w ./-]*:\s*\S")
NVME_LINE_RE = re.compile(r"^\s*NVMe\s*:", re.M)


def driver_cufile_fields(text):
    """The ``key : value`` lines of the DRIVER and CUFILE sections of one pasted output."""
    section, fields = None, set()
    for line in (raw.strip() for raw in text.splitlines()):
        if line in GDSCHECK_HEADERS:
            section = line
        elif section in ("DRIVER CONFIGURATION:", "CUFILE CONFIGURATION:") and FIELD_RE.match(line):
            fields.add(line)
    return fields


def test_real_world_gdscheck_layouts_all_parse():
    """Every gdscheck -p paste in the real-world folder: version found, NVMe line parsed, no driver or
    cuFile field left in ``unrecognised``."""
    checked = []
    for name in real_world_names("gdscheck"):
        for index, text in enumerate(pasted_outputs(real_world(name))):
            if "GDS release version" not in text and not NVME_LINE_RE.search(text):
                continue  # the file's preamble or a nvidia-fs stats paste
            where = "%s, output %d" % (name, index)
            result = parse_gdscheck(text)
            assert result["errors"].get("_input") is None, where
            assert result["gds_version"] or "GDS release version" not in text, where
            assert "NVMe" in result["drivers"] or not NVME_LINE_RE.search(text), where
            assert driver_cufile_fields(text) & set(result["unrecognised"]) == set(), where
            checked.append(where)
    assert checked


def test_real_world_nvidia_fs_stats_layouts_all_parse():
    checked = []
    for name in real_world_names("stats"):
        for index, text in enumerate(pasted_outputs(real_world(name))):
            if "NVFS Driver" not in text:
                continue
            where = "%s, output %d" % (name, index)
            result = parse_nvidia_fs_stats(text)
            assert result["nvfs_version"] and result["io_stats_enabled"] is not None, where
            assert [line for line in result["unrecognised"] if re.match(r"^[A-Z][\w -]*:.*=", line)] == [], where
            checked.append(where)
    assert checked
