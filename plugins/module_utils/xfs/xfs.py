# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure parsers for XFS geometry, XFS mount options and /proc/mdstat.

UNITS, the usual trap: ``xfs_info``/``mkfs.xfs`` print ``sunit``/``swidth`` in
FILESYSTEM BLOCKS (``bsize``, usually 4096; the line ends in ``blks``) while
``/proc/mounts`` prints ``sunit=``/``swidth=`` in 512-BYTE SECTORS. Both are
returned in bytes here so they can be compared: an md RAID0 with a 64 KiB
chunk over 4 data disks shows ``sunit=16 swidth=64 blks`` in xfs_info and
``sunit=128,swidth=512`` in /proc/mounts, 65536/262144 bytes either way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import mmap
import os
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    convert,
    to_bool,
    to_int,
)

XFS_INFO_KEYS = (
    "device", "isize", "agcount", "agsize_blocks", "agsize_bytes", "block_size",
    "sector_size", "data_blocks", "size_bytes", "sunit_blocks", "swidth_blocks",
    "sunit_bytes", "swidth_bytes", "log", "realtime", "features",
)
LOG_KEYS = ("internal", "device", "blocks", "bytes", "version", "sunit_bytes")
REALTIME_KEYS = ("device", "extent_size_bytes", "blocks", "extents")
MOUNT_SECTOR_BYTES = 512

_SECTIONS = ("meta-data", "data", "naming", "log", "realtime")
_SECTION_RE = re.compile(r"^(meta-data|data|naming|log|realtime)\s*=(.*)$")
_CONTINUATION_RE = re.compile(r"^\s+=(.*)$")
_KV_RE = re.compile(r"([A-Za-z][\w-]*)=([^\s,]*)")
# keys that are geometry, not feature flags
_GEOMETRY = {
    "meta-data": ("isize", "agcount", "agsize", "sectsz"),
    "data": ("bsize", "blocks", "imaxpct", "sunit", "swidth"),
    "naming": ("bsize",),
}
_BOOL_FEATURES = (
    "crc", "finobt", "sparse", "rmapbt", "reflink", "bigtime", "inobtcount",
    "nrext64", "exchange", "metadir", "parent", "ftype", "ascii_ci",
    "projid32bit", "spinodes", "unwritten", "lazy_count",
)


# ---------------------------------------------------------------- xfs_info
def _split_sections(text, errors):
    """``{section: {"_header": str, key: str}}`` from xfs_info/mkfs.xfs text.

    Lines before the first ``meta-data=`` (mkfs warnings such as "log stripe
    unit adjusted to 32KiB") and lines that are not part of the table are
    skipped; a second ``meta-data=`` ends the table.
    """
    sections, current = {}, None
    for line in text.splitlines():
        match = _SECTION_RE.match(line)
        if match:
            name, rest = match.group(1), match.group(2)
            if name == "meta-data" and "meta-data" in sections:
                errors["_input"] = "more than one filesystem in the input; parsed the first"
                break
            if name != "meta-data" and "meta-data" not in sections:
                continue
            current = sections.setdefault(name, {})
            first_kv = _KV_RE.search(rest)
            current["_header"] = (rest[:first_kv.start()] if first_kv else rest).strip()
        else:
            match = _CONTINUATION_RE.match(line)
            if not match or current is None:
                continue
            rest = match.group(1)
        for key, value in _KV_RE.findall(rest):
            current.setdefault(key, value)
    return sections


def _feature_value(key, raw, errors):
    if key in _BOOL_FEATURES:
        return convert(raw, to_bool, errors, "features." + key)
    try:
        return to_int(raw, key)
    except ValueError:
        return raw


def _features(sections, errors):
    features = {}
    for name in ("meta-data", "data", "naming"):
        skip = _GEOMETRY.get(name, ())
        for key, raw in sections.get(name, {}).items():
            if key == "_header" or key in skip:
                continue
            norm = key.replace("-", "_")
            features[norm] = _feature_value(norm, raw, errors)
    lazy = sections.get("log", {}).get("lazy-count")
    if lazy is not None:
        features["lazy_count"] = _feature_value("lazy_count", lazy, errors)
    return features


def _times(a, b):
    return None if a is None or b is None else a * b


def _log_info(log, errors):
    if not log:
        return None
    header = log.get("_header", "")
    internal = header.split()[:1] == ["internal"]
    bsize = convert(log.get("bsize"), to_int, errors, "log.block_size")
    blocks = convert(log.get("blocks"), to_int, errors, "log.blocks")
    sunit = convert(log.get("sunit"), to_int, errors, "log.sunit_bytes")
    return {
        "internal": internal,
        "device": None if internal or not header else header,
        "blocks": blocks,
        "bytes": _times(blocks, bsize),
        "version": convert(log.get("version"), to_int, errors, "log.version"),
        "sunit_bytes": _times(sunit, bsize),
    }


def _realtime_info(rt, errors):
    header = rt.get("_header", "") if rt else ""
    if not rt or header.split()[:1] == ["none"]:
        return None
    return {
        "device": header or None,
        "extent_size_bytes": convert(rt.get("extsz"), to_int, errors, "realtime.extent_size_bytes"),
        "blocks": convert(rt.get("blocks"), to_int, errors, "realtime.blocks"),
        "extents": convert(rt.get("rtextents"), to_int, errors, "realtime.extents"),
    }


def parse_xfs_info(text):
    """Parse ``xfs_info <mountpoint|device>`` or ``mkfs.xfs`` output (same table).

    Returns ``{device, isize, agcount, agsize_blocks, agsize_bytes,
    block_size, sector_size, data_blocks, size_bytes, sunit_blocks,
    swidth_blocks, sunit_bytes, swidth_bytes, log: {internal, device, blocks,
    bytes, version, sunit_bytes}, realtime: {device, extent_size_bytes,
    blocks, extents} or None, features: {crc, finobt, sparse, rmapbt,
    reflink, bigtime, inobtcount, nrext64, exchange, metadir, parent, ftype,
    ascii_ci, projid32bit, lazy_count, ...: bool; attr: int; any other
    key=value of the meta-data/data/naming lines as int or str}, errors: {}}``.

    ``sunit``/``swidth``/``agsize`` and the log ``sunit`` are in filesystem
    blocks in the tool output (``blks``); the ``*_bytes`` keys multiply by the
    data (or log) ``bsize``. ``realtime`` is ``None`` for ``realtime =none``.
    Key=value tokens are read wherever they sit on a line, so new xfsprogs
    fields (``nrext64``, ``exchange``, ``metadir``, ``parent``) and old ones
    (``spinodes``, ``unwritten``) need no code. Text before the table (mkfs
    warnings) is skipped. A missing section (truncated output) is reported in
    ``errors[<section>]``; no ``meta-data=`` line at all gives every field
    ``None`` and ``errors['_input']``.
    """
    result = dict.fromkeys(XFS_INFO_KEYS)
    errors = result["errors"] = {}
    if not isinstance(text, str) or not text.strip():
        errors["_input"] = "empty input"
        return result
    sections = _split_sections(text, errors)
    if "meta-data" not in sections:
        errors["_input"] = "no 'meta-data=' line: not xfs_info/mkfs.xfs output"
        return result
    for name in _SECTIONS:
        if name not in sections:
            errors[name] = "section '%s' missing (truncated output?)" % name
    meta, data = sections["meta-data"], sections.get("data", {})
    result["device"] = meta.get("_header") or None
    for key, section, raw_key in (
        ("isize", meta, "isize"), ("agcount", meta, "agcount"),
        ("agsize_blocks", meta, "agsize"), ("sector_size", meta, "sectsz"),
        ("block_size", data, "bsize"), ("data_blocks", data, "blocks"),
        ("sunit_blocks", data, "sunit"), ("swidth_blocks", data, "swidth"),
    ):
        result[key] = convert(section.get(raw_key), to_int, errors, key)
    bsize = result["block_size"]
    result["agsize_bytes"] = _times(result["agsize_blocks"], bsize)
    result["size_bytes"] = _times(result["data_blocks"], bsize)
    result["sunit_bytes"] = _times(result["sunit_blocks"], bsize)
    result["swidth_bytes"] = _times(result["swidth_blocks"], bsize)
    result["log"] = _log_info(sections.get("log"), errors)
    result["realtime"] = _realtime_info(sections.get("realtime"), errors)
    result["features"] = _features(sections, errors)
    return result


# ---------------------------------------------------------------- mount options
def parse_mount_options(opts_string):
    """Parse a mount option string (``/proc/mounts`` field 4, or the
    parenthesised list printed by ``mount``) into a dict.

    ``"rw,noatime,logbsize=256k,sunit=128,swidth=512"`` ->
    ``{"rw": True, "noatime": True, "logbsize": "256k", "sunit": 128,
    "swidth": 512}``: flags map to ``True``; ``key=value`` values are ints
    when they are plain decimal integers, else strings. ``sunit``/``swidth``
    stay in 512-byte sectors here: use :func:`mount_stripe_bytes` for bytes.
    Non-text input gives ``{}``.
    """
    options = {}
    if not isinstance(opts_string, str):
        return options
    body = opts_string.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep:
            options[key] = True
            continue
        options[key] = int(value) if value.isdigit() else value
    return options


def mount_stripe_bytes(options):
    """``{"sunit_bytes", "swidth_bytes"}`` from mount options (a dict from
    :func:`parse_mount_options` or the raw string): ``/proc/mounts`` prints
    ``sunit=``/``swidth=`` in 512-byte sectors. Absent or non-integer -> ``None``.
    """
    if not isinstance(options, dict):
        options = parse_mount_options(options)
    result = {}
    for key in ("sunit", "swidth"):
        value = options.get(key)
        is_number = isinstance(value, int) and not isinstance(value, bool)
        result[key + "_bytes"] = value * MOUNT_SECTOR_BYTES if is_number else None
    return result


# The primary superblock's sb_inprogress byte (struct xfs_dsb: magic 0, ..., rextslog 125, inprogress 126). mkfs.xfs
# writes the primary superblock first with it set, and clears it last: a filesystem whose mkfs.xfs was killed carries
# its magic and its UUID (blkid and wipefs call it xfs) with this byte set ("mkfs-in-progress bit set", xfs_repair -n;
# the kernel refuses to mount it). Measured with xfsprogs 6.1 (tests/unit/plugins/module_utils/test_xfs.py).
SB_INPROGRESS_OFFSET = 126


def superblock_in_progress(data):
    """True when ``data`` (the start of a device) is an XFS primary superblock whose mkfs.xfs never finished."""
    return len(data) > SB_INPROGRESS_OFFSET and data[:4] == b'XFSB' and data[SB_INPROGRESS_OFFSET] != 0


def read_start(path, length=4096):
    """The first ``length`` bytes of the block device ``path`` as the drive holds them (O_DIRECT, no page cache that a
    killed mkfs.xfs left behind), read-only, through no link."""
    fd = os.open(path, os.O_RDONLY | getattr(os, 'O_DIRECT', 0) | os.O_NOFOLLOW | getattr(os, 'O_CLOEXEC', 0))
    try:
        buf = mmap.mmap(-1, length)
        try:
            got = os.preadv(fd, [buf], 0)
            return bytes(buf[:got])
        finally:
            buf.close()
    finally:
        os.close(fd)
