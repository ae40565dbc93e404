# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure parser for ``fio --output-format=json`` (fio 3.x; fio 2.x fallbacks)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    convert,
    load_json_document,
    to_count,
)

FIO_KEYS = ("fio_version", "jobs", "disk_util")
JOB_KEYS = ("name", "error", "read", "write", "iodepth_level", "iodepth_max_achieved", "job_runtime_ms", "elapsed_s")
DIRECTION_KEYS = ("bw_bytes", "iops", "runtime_ms", "io_bytes", "clat_p99_ns", "lat_mean_ns")
DISK_UTIL_KEYS = ("name", "util", "read_ios", "write_ios", "read_ticks", "write_ticks", "in_queue")
IODEPTH_BUCKETS = ("1", "2", "4", "8", "16", "32", ">=64")
_P99 = "99.000000"


def _number(value, name):
    """int or float, never bool or a string."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s: %r is not a number" % (name, value))
    return value


def _dict(value):
    return value if isinstance(value, dict) else {}


def _bw_bytes(stats, errors, label):
    """fio 3.x ``bw_bytes``; fio 2.x only had ``bw`` in KiB/s."""
    if "bw_bytes" in stats:
        return convert(stats["bw_bytes"], to_count, errors, label + "bw_bytes")
    kib = convert(stats.get("bw"), to_count, errors, label + "bw_bytes")
    return None if kib is None else kib * 1024


def _io_bytes(stats, errors, label):
    if "io_bytes" in stats:
        return convert(stats["io_bytes"], to_count, errors, label + "io_bytes")
    kib = convert(stats.get("io_kbytes"), to_count, errors, label + "io_bytes")
    return None if kib is None else kib * 1024


def _latency(stats, ns_key, us_key):
    """``(block, factor)``: the ``*_ns`` block (fio >= 3.0) or the usec one x 1000."""
    if isinstance(stats.get(ns_key), dict):
        return stats[ns_key], 1
    return _dict(stats.get(us_key)), 1000


def _scaled(value, factor, errors, key):
    number = convert(value, _number, errors, key)
    return None if number is None else number * factor


def _direction(stats, errors, label):
    if not isinstance(stats, dict):
        return None
    clat, clat_factor = _latency(stats, "clat_ns", "clat")
    lat, lat_factor = _latency(stats, "lat_ns", "lat")
    percentiles = _dict(clat.get("percentile"))
    return {
        "bw_bytes": _bw_bytes(stats, errors, label),
        "iops": convert(stats.get("iops"), _number, errors, label + "iops"),
        "runtime_ms": convert(stats.get("runtime"), to_count, errors, label + "runtime_ms"),
        "io_bytes": _io_bytes(stats, errors, label),
        "clat_p99_ns": _scaled(percentiles.get(_P99), clat_factor, errors, label + "clat_p99_ns"),
        "lat_mean_ns": _scaled(lat.get("mean"), lat_factor, errors, label + "lat_mean_ns"),
    }


def _iodepth(job, errors, label):
    """``(levels, max_achieved)``: the depth histogram and its deepest non-empty bucket."""
    raw = job.get("iodepth_level")
    if not isinstance(raw, dict):
        return None, None
    levels = {}
    for bucket, share in raw.items():
        levels[bucket] = convert(share, _number, errors, "%siodepth_level.%s" % (label, bucket))
    deepest = None
    for bucket in IODEPTH_BUCKETS:
        if levels.get(bucket):
            deepest = bucket
    return levels, deepest


def _job(job, errors, label):
    levels, deepest = _iodepth(job, errors, label)
    return {
        "name": job.get("jobname"),
        "error": convert(job.get("error"), to_count, errors, label + "error"),
        "read": _direction(job.get("read"), errors, label + "read."),
        "write": _direction(job.get("write"), errors, label + "write."),
        "iodepth_level": levels,
        "iodepth_max_achieved": deepest,
        "job_runtime_ms": convert(job.get("job_runtime"), to_count, errors, label + "job_runtime_ms"),
        "elapsed_s": convert(job.get("elapsed"), to_count, errors, label + "elapsed_s"),
    }


def _disk(entry, errors, label):
    disk = {"name": entry.get("name")}
    disk["util"] = convert(entry.get("util"), _number, errors, label + "util")
    for key in DISK_UTIL_KEYS[2:]:
        disk[key] = convert(entry.get(key), to_count, errors, label + key)
    return disk


def parse_fio_json(text):
    """Parse ``fio --output-format=json`` output.

    Returns ``{fio_version: "fio-3.33", jobs: [{name, error: int (fio's errno,
    0 = ok), read: {...}, write: {...}, iodepth_level: {"1": pct, "2", "4",
    "8", "16", "32", ">=64"}, iodepth_max_achieved: the deepest bucket key
    with a non-zero share ("16", ">=64", ...) or None}], disk_util: [{name,
    util (%), read_ios, write_ios, read_ticks, write_ticks, in_queue}],
    errors: {}}``, where ``read``/``write`` are ``{bw_bytes (bytes/s), iops,
    runtime_ms, io_bytes, clat_p99_ns, lat_mean_ns}``.

    ``iodepth_level`` is fio's histogram of the depth actually in flight: a
    job asked for ``iodepth=128`` whose top bucket is "8" never got deeper
    than 8 (the device or engine throttled it). ``clat_p99_ns`` is ``None``
    when fio printed no percentiles. fio 2.x fields (``bw`` KiB/s, ``clat``/
    ``lat`` in usec, ``io_kbytes``) are converted. Non-JSON lines before the
    document (``fio: io_u error ...``, ``fio: pid=0, err=2/...``) and after it
    are skipped. Unusable input: every field ``None``, ``errors['_input']``.

    ``job_runtime_ms`` is fio's ``job_runtime`` (fio >= 3.x; ``None`` when
    absent), ``elapsed_s`` its whole-second ``elapsed``. Measured with fio 3.33
    (strace): ``write.runtime_ms`` and ``job_runtime_ms`` of a job with
    ``end_fsync=1`` include the final fsync (writes 0.605 s + fsync 0.465 s,
    runtime 1072 ms), so ``bw_bytes`` is bytes on media per second.
    """
    result = dict.fromkeys(FIO_KEYS)
    errors = result["errors"] = {}
    doc, error = load_json_document(text)
    if error is None and not (isinstance(doc, dict) and isinstance(doc.get("jobs"), list)):
        error = "no 'jobs' list: not fio JSON output"
    if error is not None:
        errors["_input"] = error
        return result
    result["fio_version"] = doc.get("fio version")
    result["jobs"] = [
        _job(job, errors, "jobs[%d]." % index)
        for index, job in enumerate(doc["jobs"]) if isinstance(job, dict)
    ]
    result["disk_util"] = [
        _disk(entry, errors, "disk_util[%d]." % index)
        for index, entry in enumerate(doc.get("disk_util") or []) if isinstance(entry, dict)
    ]
    return result
