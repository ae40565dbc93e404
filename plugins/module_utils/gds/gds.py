# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure parsers for NVIDIA GPUDirect Storage (GDS) state.

* :func:`parse_gdscheck` - ``gdscheck -p`` (GDS 1.0 to 1.16+).
* :func:`parse_cufile_json` - ``/etc/cufile.json`` (comments and trailing
  commas allowed), with NVIDIA's documented defaults filled in.
* :func:`parse_nvidia_fs_stats` - ``/proc/driver/nvidia-fs/stats`` in both the
  "IO stats: Enabled" and "IO stats: Disabled" layouts.

A cuFile call succeeds in compatibility (POSIX) mode too, so "it ran" never
proves GPUDirect was used: these parsers report the configured/observed path
explicitly (``nvme_supported``, ``nvme_modes``, ``use_compat_mode``, and the
nvidia-fs read/write counters, which only move when ``rw_stats_enabled=1``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    convert,
    to_bool,
    to_int,
)

GDSCHECK_KEYS = (
    "gds_version", "nvidia_fs_version", "nvidia_fs_min_version", "libcufile_version", "drivers",
    "driver_options", "nvme_supported", "nvme_modes", "use_compat_mode",
    "properties", "gpus", "iommu_enabled", "platform", "open_kernel_module", "environment",
    "unrecognised",
)
CUFILE_KEYS = ("properties", "set", "raw")
NVFS_STATS_KEYS = (
    "gds_version", "stats_version", "nvfs_version", "peerdirect_supported", "io_stats_enabled",
    "peer_io_stats_enabled", "logging_level", "active_shadow_buffer_mib", "active_processes",
    "reads", "writes", "counters", "gpus", "peer_affinity", "unrecognised",
)
READ_KEYS = ("n", "ok", "err", "mib", "io_state_err", "bandwidth_mib_s", "avg_latency_us")
WRITE_KEYS = READ_KEYS + ("pg_cache", "pg_cache_fail", "pg_cache_eio")

# Effective defaults when cufile.json leaves a key out. Sources:
# * properties.max_direct_io_size_kb 16384, max_device_cache_size_kb 131072,
#   max_device_pinned_mem_size_kb 33554432, use_poll_mode false,
#   poll_mode_max_size_kb 4, profile.cufile_stats 0: "GPUDirect Storage
#   cufile.json Variables" table, NVIDIA GDS Benchmarking and Configuration
#   Guide (docs.nvidia.com/gpudirect-storage/configuration-guide).
# * properties.allow_compat_mode true, force_compat_mode false,
#   fs.generic.posix_unaligned_writes false: "cuFile Compatibility Mode"
#   table, cuFile API Reference Guide (docs.nvidia.com/gpudirect-storage/
#   api-reference-guide). The CUDA 11.4-era configuration guide listed
#   allow_compat_mode false; current guides and shipped files say true.
# * execution.max_io_queue_depth 128, max_io_threads 4, parallel_io true,
#   min_io_threshold_size_kb 8192, max_request_parallelism 4,
#   properties.per_buffer_cache_size_kb 1024, use_pci_p2pdma false: the
#   /etc/cufile.json shipped with GDS as reproduced in the configuration guide,
#   and the same values printed by gdscheck -p (GDS 1.14) on default installs.
CUFILE_DEFAULTS = {
    "properties.max_direct_io_size_kb": 16384,
    "properties.max_device_cache_size_kb": 131072,
    "properties.max_device_pinned_mem_size_kb": 33554432,
    "properties.per_buffer_cache_size_kb": 1024,
    "properties.use_poll_mode": False,
    "properties.poll_mode_max_size_kb": 4,
    "properties.allow_compat_mode": True,
    "properties.force_compat_mode": False,
    "properties.use_pci_p2pdma": False,
    "fs.generic.posix_unaligned_writes": False,
    "execution.max_io_threads": 4,
    "execution.max_io_queue_depth": 128,
    "execution.parallel_io": True,
    "execution.min_io_threshold_size_kb": 8192,
    "execution.max_request_parallelism": 4,
    "profile.cufile_stats": 0,
}

_SECTION_HEADERS = {
    "ENVIRONMENT": "environment",
    "DRIVER CONFIGURATION": "drivers",
    "CUFILE CONFIGURATION": "cufile",
    "GPU INFO": "gpus",
    "PLATFORM INFO": "platform",
}
_VERSION_RE = re.compile(r"GDS release version:\s*(\S+)")
# "nvidia_fs version:  2.24 libcufile version: 2.12" (GDS < 1.16), "nvidia_fs version:  2.27 nvidia_fs
# minimum version: 2.12" (1.16+), either label alone, "libcufile version: 2.12" on its own line.
_VERSION_LABELS = {
    "nvidia_fs version": "nvidia_fs_version",
    "nvidia_fs minimum version": "nvidia_fs_min_version",
    "libcufile version": "libcufile_version",
}
_VERSION_LABEL_RE = re.compile(r"(nvidia_fs minimum version|nvidia_fs version|libcufile version)\s*:")
_VERSION_NUMBER_RE = re.compile(r"^\d+(?:\.\d+)*(?:[-.][\w.]+)?$")
_KEY_VALUE_RE = re.compile(r"^(.+?)\s*:\s*(.*)$")
_PROPERTY_KEY_RE = re.compile(r"^[a-z_]+(\.[A-Za-z0-9_]+)+$")
_CUFILE_KEY_RE = re.compile(r"^[A-Za-z_][\w.\-/]*$")
_ENV_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*[:=]\s*(.*)$")
_GPU_RE = re.compile(
    r"^GPU index\s+(\d+)\s+(.*?)\s+bar:\s*(\d+)\s+bar size \(MiB\):\s*(\d+)(.*)$")
_GPU_FALLBACK_RE = re.compile(r"^GPU index\s+(\d+)\s*(.*)$")
_DRIVER_KEY_RE = re.compile(r"^(--)?[A-Za-z][\w ./-]*$")
_INT_WORDS_RE = re.compile(r"^-?\d+(\s+-?\d+)+$")
_VERIFICATION_RE = re.compile(r"^Platform verification\s+(\w+)\s*:?\s*(.*)$", re.IGNORECASE)
_PLATFORM_KEYS = ("IOMMU", "Nvidia Driver Info Status", "Cuda Driver Version Installed")
# A shell prompt pasted with the output: "$ gdscheck -p", "user@host:~$ ...", "[root@node src]# cat ...",
# or any prompt character followed by a command naming gdscheck or a nvidia-fs proc file.
_PROMPT_RE = re.compile(
    r"^\$(?:\s|$)|^\[[^\]]*\][$#](?:\s|$)|^[\w.-]+@[\w.-]+\S*[$#](?:\s|$)"
    r"|[$#]\s.*(?:gdscheck|/proc/driver/nvidia-fs/)")
_GPUDIRECT_MODES = ("nvfs", "p2p", "p2pdma", "dmabuf")
_NON_GDS_MODES = ("compat",)


# ---------------------------------------------------------------- helpers
def _typed(value):
    """gdscheck/cufile scalar text -> bool, int, [int] or the stripped string."""
    text = value.strip()
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return to_int(text)
    except ValueError:
        pass
    if _INT_WORDS_RE.match(text):
        return [int(word) for word in text.split()]
    return text


def _lines(text):
    return [line.strip() for line in text.splitlines()]


def _is_noise(line):
    """Blank lines, ``=====`` rules and pasted shell prompts: not output, not reported."""
    return not line or line.startswith("=====") or bool(_PROMPT_RE.search(line))


def _enabled(word):
    return word.strip().lower() in ("true", "enabled", "yes")


# ---------------------------------------------------------------- gdscheck -p
def driver_status(raw):
    """``"Supported"`` / ``"Unsupported"`` (GDS < 1.16) or a mode list such as
    ``"nvfs, compat"`` (GDS 1.16+) -> ``{"supported", "modes", "raw"}``.

    ``supported`` is True for "Supported"/"Enabled" or when a GPUDirect mode
    (``nvfs``, ``p2p``, ``p2pdma``, ``dmabuf`` - the CUDA dma-buf path) is
    listed; False for "Unsupported" or ``compat`` alone (POSIX fallback, not
    GPUDirect); ``None`` when the text holds a word it does not know (a future
    mode, or a truncated "Unsupp"): unknown is not guessed. ``modes`` is
    ``[]`` for the old one-word form.
    """
    text = raw.strip()
    low = text.lower()
    if low in ("supported", "enabled"):
        return {"supported": True, "modes": [], "raw": text}
    if low in ("unsupported", "disabled", "not supported", ""):
        return {"supported": False, "modes": [], "raw": text}
    modes = [m.strip().lower() for m in text.split(",") if m.strip()]
    if any(mode in _GPUDIRECT_MODES for mode in modes):
        supported = True
    elif all(mode in _NON_GDS_MODES for mode in modes):
        supported = False
    else:
        supported = None
    return {"supported": supported, "modes": modes, "raw": text}


def _section_of(line):
    return _SECTION_HEADERS.get(line.rstrip(":").strip()) if line.endswith(":") else None


def _is_driver_value(value):
    """"Supported"/"Unsupported" or a list of known modes ("nvfs, compat")."""
    low = value.strip().lower()
    modes = [mode.strip() for mode in low.split(",")]
    return low in ("supported", "unsupported") or all(mode in _GPUDIRECT_MODES + _NON_GDS_MODES for mode in modes)


def _guess_section(key, value):
    """For fragments without headers: classify a ``key : value`` line by shape."""
    if _PROPERTY_KEY_RE.match(key):
        return "cufile"
    if key.startswith("--") or _is_driver_value(value):
        return "drivers"
    if key in _PLATFORM_KEYS:
        return "platform"
    if key == "Platform":
        return "preamble"
    return None


def _parse_gpu(line):
    match = _GPU_RE.match(line)
    if match:
        tail = match.group(5)
        iommu = re.search(r"IOMMU State:\s*(\w+)", tail)
        return {
            "index": int(match.group(1)), "name": match.group(2),
            "bar": int(match.group(3)), "bar_size_mib": int(match.group(4)),
            "supports_gds": "supports GDS" in tail and "not support" not in tail,
            "iommu_enabled": _iommu_state(iommu.group(1)) if iommu else None,
        }
    match = _GPU_FALLBACK_RE.match(line)
    return {"index": int(match.group(1)), "name": match.group(2) or None, "bar": None,
            "bar_size_mib": None, "supports_gds": None, "iommu_enabled": None}


def _iommu_state(value):
    low = value.strip().lower()
    if low.startswith("disabled") or low == "off":
        return False
    if "enabled" in low or "pass" in low or low == "on":
        return True
    return None


def _versions_line(result, line):
    """The nvidia_fs / libcufile version line: None when ``line`` is not one, else whether every
    labelled value was a lone version. A value that does not start with a version (``"Not Loaded"``)
    leaves that field ``None``; one with more after the version (a line cut short) keeps the version;
    either way the line is reported."""
    parts = _VERSION_LABEL_RE.split(line)
    if len(parts) < 3 or parts[0].strip():
        return None
    understood = True
    for label, value in zip(parts[1::2], parts[2::2]):
        words = value.split()
        version = words[0] if words and _VERSION_NUMBER_RE.match(words[0]) else None
        result[_VERSION_LABELS[label]] = version
        understood = understood and len(words) == (1 if version else 0)
    return understood


def _driver_entry(result, key, value):
    if not _DRIVER_KEY_RE.match(key):
        return False
    if key.startswith("--"):
        result["driver_options"][key.lstrip("-").strip()] = value.strip()
    else:
        result["drivers"][key] = driver_status(value)
    return True


def _cufile_entry(result, key, value):
    if not _CUFILE_KEY_RE.match(key):
        return False
    result["properties"][key] = _typed(value)
    return True


def _platform_entry(result, key, value):
    result["platform"][key] = _typed(value)
    return True


def _preamble_entry(result, key, value):
    """``Platform: x86_64`` above the sections is the CPU architecture (kept as ``platform["arch"]``;
    the PLATFORM INFO line ``Platform: <system>, Arch: ...`` stays ``platform["Platform"]``)."""
    result["platform"]["Platform" if "Arch:" in value else "arch"] = value.strip()
    return True


_SECTION_ENTRY = {
    "drivers": _driver_entry, "cufile": _cufile_entry, "platform": _platform_entry,
    "preamble": _preamble_entry,
}


def _environment_line(result, line):
    match = _ENV_RE.match(line)
    if match:
        result["environment"][match.group(1)] = match.group(2).strip()
    return bool(match)


def _verification_line(result, match):
    result["platform"]["verification"] = match.group(1).lower()
    if match.group(2).strip():
        result["platform"]["verification_detail"] = match.group(2).strip()
    return True


def _gdscheck_line(result, section, line):
    """Store one line of ``gdscheck -p``; False when no rule understood it."""
    version = _VERSION_RE.search(line)
    if version:
        result["gds_version"] = version.group(1)
        return True
    versions = _versions_line(result, line)
    if versions is not None:
        return versions
    if line.startswith("GPU index"):
        result["gpus"].append(_parse_gpu(line))
        return True
    verification = _VERIFICATION_RE.match(line)
    if verification:
        return _verification_line(result, verification)
    if section == "environment" or (section is None and line.startswith("CUFILE_")):
        return _environment_line(result, line)
    match = _KEY_VALUE_RE.match(line)
    if not match:
        return False
    key, value = match.group(1).strip(), match.group(2)
    entry = _SECTION_ENTRY.get(section or _guess_section(key, value))
    return bool(entry) and entry(result, key, value)


def parse_gdscheck(text):
    """Parse ``gdscheck -p`` output.

    Returns ``{gds_version, nvidia_fs_version, nvidia_fs_min_version,
    libcufile_version (str or None when not printed), drivers: {"NVMe":
    {supported: bool, modes: [str], raw: str}, "NVMe P2PDMA": {...},
    "NVMeOF": ..., ...}, driver_options: {"Mellanox PeerDirect": "Enabled",
    "rdma library": ..., ...}, nvme_supported: bool or None, nvme_modes: [str]
    or None, use_compat_mode: bool or None, properties:
    {"properties.use_compat_mode": False, "execution.max_io_queue_depth": 128,
    "properties.posix_pool_slab_size_kb": [4, 1024, 16384], ...}, gpus:
    [{index, name, bar, bar_size_mib, supports_gds, iommu_enabled}],
    iommu_enabled: bool or None, platform: {"IOMMU": "disabled", "Cuda Driver
    Version Installed": 12090, "arch": "x86_64", "verification": "succeeded",
    ...}, open_kernel_module: bool or None, environment:
    {"CUFILE_LOGGING_LEVEL": "TRACE", ...}, unrecognised: [str], errors: {}}``.

    Versions: the nvidia_fs line reads ``nvidia_fs version: 2.24 libcufile
    version: 2.12`` before GDS 1.16 and ``nvidia_fs version: 2.27 nvidia_fs
    minimum version: 2.12`` from 1.16 (no libcufile version: ``None``); either
    label may stand alone, and a value that is not a version ("Not Loaded")
    is ``None`` with the line listed in ``unrecognised``.

    ``nvme_supported`` comes from the ``NVMe`` driver line (see
    :func:`driver_status`): "Supported" (GDS < 1.16) or a mode list with a
    GPUDirect mode such as ``nvfs`` or ``dmabuf`` (GDS 1.16+, "NVMe : nvfs,
    compat") -> True; "Unsupported" or ``compat`` alone -> False; unknown
    words -> None. CUFILE values are typed (true/false -> bool, digits -> int,
    "4 1024 16384" -> list). ENVIRONMENT lines (``CUFILE_ENV_PATH_JSON :
    /x``) fill ``environment`` (strings). ``platform`` holds the PLATFORM INFO
    lines under their own labels, plus ``arch`` (the ``Platform: x86_64`` line
    above the sections) and ``verification`` ("succeeded", or the word printed
    instead, with any text after it in ``verification_detail``).
    ``open_kernel_module`` is True when a platform driver line says the open
    kernel module is installed ("Supported(Nvidia Open Driver Installed)"),
    False when it says proprietary/closed, else None.

    Fragments without section headers are classified by line shape. Lines no
    rule understood are listed, stripped and in order, in ``unrecognised``
    (blank lines, ``=====`` rules, section headers and pasted shell prompts
    are not). Sections absent from a truncated output are named in
    ``errors``. No gdscheck content at all: every field ``None``,
    ``errors['_input']``.
    """
    result = dict.fromkeys(GDSCHECK_KEYS)
    errors = result["errors"] = {}
    if not isinstance(text, str) or not text.strip():
        errors["_input"] = "empty input"
        return result
    result.update(drivers={}, driver_options={}, properties={}, gpus=[], platform={}, environment={},
                  unrecognised=[])
    section, seen = None, set()
    for line in _lines(text):
        if _is_noise(line):
            continue
        header = _section_of(line)
        if header:
            section = header
            seen.add(header)
        elif not _gdscheck_line(result, section, line):
            result["unrecognised"].append(line)
    if not (result["gds_version"] or result["drivers"] or result["properties"]):
        for key in GDSCHECK_KEYS:
            result[key] = None
        errors["_input"] = "no gdscheck -p content found"
        return result
    _summarise_gdscheck(result, seen)
    return result


def _open_kernel_module(platform):
    """True/False from a platform driver line naming the open / proprietary kernel module, else None."""
    for key, value in platform.items():
        if "driver" not in key.lower() or not isinstance(value, str):
            continue
        if re.search(r"\bopen\b", value, re.IGNORECASE):
            return True
        if re.search(r"proprietary|closed", value, re.IGNORECASE):
            return False
    return None


def _summarise_gdscheck(result, seen):
    errors = result["errors"]
    nvme = result["drivers"].get("NVMe")
    if nvme is not None:
        result["nvme_supported"], result["nvme_modes"] = nvme["supported"], nvme["modes"]
    compat = result["properties"].get("properties.use_compat_mode")
    if compat is not None:
        result["use_compat_mode"] = convert(compat, to_bool, errors, "use_compat_mode")
    iommu = result["platform"].get("IOMMU")
    if isinstance(iommu, str):
        result["iommu_enabled"] = _iommu_state(iommu)
    result["open_kernel_module"] = _open_kernel_module(result["platform"])
    if result["gds_version"]:
        for header, name in _SECTION_HEADERS.items():
            if name != "environment" and name not in seen:
                errors[name] = "section '%s' missing (truncated output?)" % header


# ---------------------------------------------------------------- cufile.json
def _strip_comments(text):
    """Remove ``//`` and ``/* */`` comments outside JSON strings ("http://x" survives)."""
    out, i, length, in_string = [], 0, len(text), False
    while i < length:
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\" and i + 1 < length:
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = length if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = length if end < 0 else end + 2
            out.append(" ")
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _strip_trailing_commas(text):
    """Drop a ``,`` that is followed (after whitespace) by ``}`` or ``]``, outside strings."""
    out, in_string, escaped = [], False, False
    for index, char in enumerate(text):
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == ",":
            rest = text[index + 1:].lstrip()
            if rest[:1] in ("}", "]"):
                continue
        out.append(char)
    return "".join(out)


def flatten(obj, prefix='', out=None):
    """{'a': {'b': 1}} -> {'a.b': 1}: every leaf of a JSON object under its dotted path (an empty object is a
    leaf); returns ``out``."""
    out = {} if out is None else out
    for key, value in obj.items():
        name = prefix + key
        if isinstance(value, dict) and value:
            flatten(value, name + ".", out)
        else:
            out[name] = value
    return out


def _default_type_check(key, value, errors):
    """A known key must have its default's JSON type (cuFile does not coerce)."""
    want_bool = isinstance(CUFILE_DEFAULTS[key], bool)
    if want_bool and not isinstance(value, bool):
        errors[key] = "%s: %r is not a JSON boolean" % (key, value)
        return None
    if not want_bool and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        errors[key] = "%s: %r is not a non-negative JSON integer" % (key, value)
        return None
    return value


def parse_cufile_json(text):
    """Parse a cufile.json (``/etc/cufile.json`` or a ``CUFILE_ENV_PATH_JSON``
    file). ``//`` and ``/* */`` comments and trailing commas are removed
    first, outside strings only (``"http://..."`` values survive).

    Returns ``{properties: {dotted key: effective value}, set: [dotted keys
    present in the file, sorted], raw: parsed dict, errors: {}}``.
    ``properties`` holds every leaf of the file under its dotted path
    (``"execution.max_io_queue_depth"``, ``"fs.generic.posix_unaligned_writes"``,
    ``"properties.rdma_dev_addr_list"``) plus, for the keys in
    :data:`CUFILE_DEFAULTS` that the file leaves out, NVIDIA's documented
    default (sources in the comment above that table). A known key with the
    wrong JSON type (``"max_io_queue_depth": "128"``) is ``None`` with an
    ``errors`` entry. Unusable input: all fields ``None``, ``errors['_input']``.
    """
    result = dict.fromkeys(CUFILE_KEYS)
    errors = result["errors"] = {}
    if not isinstance(text, str) or not text.strip():
        errors["_input"] = "empty input"
        return result
    try:
        doc = json.loads(_strip_trailing_commas(_strip_comments(text)))
    except ValueError as exc:
        errors["_input"] = "not valid JSON after removing comments: %s" % exc
        return result
    if not isinstance(doc, dict):
        errors["_input"] = "expected a JSON object, got %s" % type(doc).__name__
        return result
    present = {}
    flatten(doc, "", present)
    effective = dict(CUFILE_DEFAULTS)
    for key, value in present.items():
        effective[key] = _default_type_check(key, value, errors) if key in CUFILE_DEFAULTS else value
    result.update(properties=effective, set=sorted(present), raw=doc)
    return result


# ---------------------------------------------------------------- nvidia-fs stats
def _stat_key(raw):
    key = raw.lower().replace("(mib/s)", "_mib_s").replace("(usec)", "_us").replace("(mib)", "_mib")
    key = re.sub(r"[^a-z0-9]+", "_", key).strip("_")
    return {"readmib": "mib", "writemib": "mib"}.get(key, key)


def _stat_pairs(text):
    return dict((_stat_key(k), int(v)) for k, v in re.findall(r"([A-Za-z][\w\-()/%]*)=(-?\d+)", text))


def _io_block(pairs, keys):
    block = dict.fromkeys(keys)
    block.update((k, v) for k, v in pairs.items() if k in block)
    return block


_PCI = r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]"
_GPU_STATS_RE = re.compile(r"^GPU\s+(" + _PCI + r")\s+uuid:\s*(\S+)(.*)$")
# /proc/driver/nvidia-fs/peer_affinity, often pasted with the stats: "GPU :0000:ca:00.0 :0 0 ... 0".
_PEER_AFFINITY_RE = re.compile(r"^GPU\s*:\s*(" + _PCI + r")\s*:\s*(-?\d+(?:\s+-?\d+)*)\s*$")
_PEER_AFFINITY_HEADER_RE = re.compile(
    r"^GPU P2P DMA distribution based on|^\(last column indicates p2p via root complex\)$")
_STATS_HEADER_RES = (
    ("gds_version", re.compile(r"^GDS Version:\s*(\S+)"), str),
    ("stats_version", re.compile(r"^NVFS statistics\s*\(ver:\s*([^)\s]+)\)"), str),
    ("nvfs_version", re.compile(r"^NVFS Driver\s*\(version:\s*([^)\s]+)\)"), str),
    ("peerdirect_supported", re.compile(r"^Mellanox PeerDirect Supported:\s*(\w+)"), _enabled),
    ("logging_level", re.compile(r"^Logging level:\s*(\S+)"), str),
    ("active_shadow_buffer_mib", re.compile(r"^Active Shadow-Buffer \(MiB\):\s*(\d+)$"), int),
    ("active_processes", re.compile(r"^Active Process(?:es)?:\s*(\d+)$"), int),
)
_IO_STATS_RE = re.compile(r"^IO stats:\s*(\w+)(?:,\s*peer IO stats:\s*(\w+))?", re.IGNORECASE)


def _stats_header_line(result, line):
    for key, regex, convert_value in _STATS_HEADER_RES:
        match = regex.match(line)
        if match:
            result[key] = convert_value(match.group(1))
            return True
    match = _IO_STATS_RE.match(line)
    if match:
        result["io_stats_enabled"] = _enabled(match.group(1))
        if match.group(2):
            result["peer_io_stats_enabled"] = _enabled(match.group(2))
    return bool(match)


def _stats_gpu_line(result, line):
    gpu = _GPU_STATS_RE.match(line)
    if gpu:
        entry = {"pci": gpu.group(1), "uuid": gpu.group(2)}
        entry.update(_stat_pairs(gpu.group(3)))
        result["gpus"].append(entry)
        return True
    row = _PEER_AFFINITY_RE.match(line)
    if row:
        result["peer_affinity"][row.group(1)] = [int(word) for word in row.group(2).split()]
    return bool(row) or bool(_PEER_AFFINITY_HEADER_RE.match(line))


def _stats_counter_line(result, line, io_pairs):
    name, sep, rest = line.partition(":")
    pairs = _stat_pairs(rest) if sep else {}
    if not pairs:
        return False
    name = _stat_key(name)
    if name in ("reads", "writes"):
        io_pairs.setdefault(name, {}).update(pairs)
    else:
        result["counters"].setdefault(name, {}).update(pairs)
    return True


def _stats_line(result, line, io_pairs):
    """Store one stats line; False when no rule understood it."""
    return (_stats_gpu_line(result, line) or _stats_header_line(result, line)
            or _stats_counter_line(result, line, io_pairs))


def parse_nvidia_fs_stats(text):
    """Parse ``/proc/driver/nvidia-fs/stats``.

    Returns ``{gds_version, stats_version ("4.0"), nvfs_version (str),
    peerdirect_supported: bool, io_stats_enabled: bool,
    peer_io_stats_enabled: bool, logging_level ("info"),
    active_shadow_buffer_mib: int, active_processes: int, reads: {n, ok, err,
    mib, io_state_err, bandwidth_mib_s, avg_latency_us} or None, writes: {... +
    pg_cache, pg_cache_fail, pg_cache_eio} or None, counters: {"mmap": {n, ok,
    err, munmap}, "bar1_map": {...}, "batches": {...}, "sparse_reads": {...},
    "error": {...}, "ops": {read, write, batchio}}, gpus: [{pci, uuid,
    registered_mib, cache_mib, max_pinned_mib, ...}], peer_affinity: {pci:
    [int]}, unrecognised: [str], errors: {}}``.

    With "IO stats: Disabled" (the default; enable with
    ``/sys/module/nvidia_fs/parameters/rw_stats_enabled``) the driver prints
    only ``err``/``io_state_err`` for reads and writes: the hidden counters
    (``n``, ``ok``, ``mib``, bandwidth, latency) are ``None``, never 0, so a
    zero is never mistaken for "no GPUDirect I/O happened". ``reads``/
    ``writes`` are ``None`` only when their line is absent. Rows of
    ``/proc/driver/nvidia-fs/peer_affinity`` pasted with the stats
    (``GPU :0000:ca:00.0 :0 0 ... 0``, counts by PCI distance, the last via
    the root complex) fill ``peer_affinity``; its header lines, blank lines
    and shell prompts are skipped. Any other line no rule understood is
    listed, stripped and in order, in ``unrecognised``.
    """
    result = dict.fromkeys(NVFS_STATS_KEYS)
    errors = result["errors"] = {}
    if not isinstance(text, str) or not text.strip():
        errors["_input"] = "empty input"
        return result
    result.update(counters={}, gpus=[], peer_affinity={}, unrecognised=[])
    io_pairs = {}
    for line in _lines(text):
        if not _is_noise(line) and not _stats_line(result, line, io_pairs):
            result["unrecognised"].append(line)
    if result["gds_version"] is None and result["io_stats_enabled"] is None and not io_pairs:
        for key in NVFS_STATS_KEYS:
            result[key] = None
        errors["_input"] = "no nvidia-fs stats content found"
        return result
    if "reads" in io_pairs:
        result["reads"] = _io_block(io_pairs["reads"], READ_KEYS)
    if "writes" in io_pairs:
        result["writes"] = _io_block(io_pairs["writes"], WRITE_KEYS)
    return result
