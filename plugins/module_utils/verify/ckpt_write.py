# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure helpers of the ``checkpoint_write`` and ``queue_depth_sweep`` modules.

Everything here is a function of its arguments (no I/O): validation of the
options (messages name the value and the limit), the shard plan, the fio argv,
the free-space check and the reductions of parsed fio output (see
:func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio.parse_fio_json`)
to MLPerf Storage style results. GiB = 1024^3 bytes, as MLPerf Storage reports
checkpoint throughput.

Three fio choices are fixed here on purpose:

* The files are made and sized by the module (module_utils/common/scratch.py: ftruncate, a sparse file, in a directory
  made for the run) and fio writes them through ``/proc/self/fd/<N>`` with ``--fallocate=none``: O_DIRECT writes
  then never extend a file (on XFS a direct write beyond EOF takes the inode lock exclusively and drains all
  direct I/O in flight, which would make ``iodepth`` meaningless for sequential writes), and fio never lays a
  file out again (fio 3.33 unlinks and re-creates a file it has to extend, which fails on a /proc/self/fd name).
  The file stays sparse until written, so ``st_blocks`` grows with the data: the progress reads it.
* ``--thread``: fio's jobs are threads of one process, not processes that each call setsid(), so ending fio's one
  process (the module's timeout, a signal, a kill of the module's process group) ends every job.
* ``--end_fsync=1`` (``fsync: true``): fio 3.33 counts the final fsync in
  the job's runtime (measured: writes 0.605 s + fsync 0.465 s = runtime
  1072 ms), so a rank's seconds end when its data is on media.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio import parse_fio_json
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size

GIB = 1024 ** 3
PAGE = 4096
IOENGINES = ("io_uring", "libaio", "psync")
MAX_RANKS = 1024
MAX_QUEUE_DEPTH = 65535
# The most bytes one size option may name (1 EiB): fio counts in 64 bits, and nothing real comes near.
MAX_SIZE = 2 ** 60
SHARD_NAME = "rank_%d.ckpt"
DEFAULT_DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def int_in_range(value, name, low, high=None):
    """``value`` as an int within [low, high]; ``ValueError`` naming the value and the limit."""
    if not _is_int(value):
        raise ValueError("%s: %r is not an integer" % (name, value))
    if value < low:
        raise ValueError("%s: %d is below the minimum %d" % (name, value, low))
    if high is not None and value > high:
        raise ValueError("%s: %d is above the maximum %d" % (name, value, high))
    return value


def number(value, name):
    """A finite real number from an option given as an int, a float or a numeric string (what templating may
    give); bools, None, other types, NaN and the infinities refused, naming the option and the value."""
    given = value
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError("%s: %r is not a number" % (name, given))
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s: %r is not a number" % (name, given))
    if math.isnan(value) or math.isinf(value):
        raise ValueError("%s: %r is not a finite number" % (name, given))
    return value


def fraction_in_range(value, name, low=0.0, high=1.0, low_open=False, high_open=True):
    """A number in [low, high) by default; bools, strings, NaN and the infinities refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s: %r is not a number" % (name, value))
    number(value, name)
    below = value <= low if low_open else value < low
    above = value >= high if high_open else value > high
    if below or above:
        raise ValueError("%s: %r is out of range: it must be %s %s and %s %s" % (
            name, value, "above" if low_open else "at least", low, "below" if high_open else "at most", high))
    return value


def size_at_most(value, name, high=MAX_SIZE):
    """A size option in bytes (:func:`parse_size`), at most ``high``."""
    size = parse_size(value, name)
    if size > high:
        raise ValueError("%s: %r (%d bytes) is above the maximum %d bytes" % (name, value, size, high))
    return size


def block_size_bytes(value, name="block_size"):
    """A block size in bytes: a size string or int, a multiple of 4096 (O_DIRECT alignment)."""
    size = parse_size(value, name)
    if size % PAGE:
        raise ValueError("%s: %r (%d bytes) is not a multiple of %d (O_DIRECT needs 4 KiB alignment)"
                         % (name, value, size, PAGE))
    return size


def shard_plan(ranks, block_size, shard_size=None, total_size=None):
    """How much each rank writes.

    Exactly one of ``shard_size`` (per rank, a multiple of ``block_size``) and
    ``total_size`` (the whole checkpoint, divided by ``ranks`` and rounded down
    to a multiple of ``block_size``). Returns ``{shard_bytes, total_bytes,
    block_size, ranks, requested_total_bytes}`` (the last is ``None`` with
    ``shard_size``). Raises ``ValueError`` naming the value and the limit.
    """
    ranks = int_in_range(ranks, "ranks", 1, MAX_RANKS)
    bs = block_size_bytes(block_size)
    if (shard_size is None) == (total_size is None):
        raise ValueError("give exactly one of shard_size (per rank) and total_size (whole checkpoint), got %s"
                         % ("both" if shard_size is not None else "neither"))
    requested = None
    if shard_size is not None:
        shard = parse_size(shard_size, "shard_size")
        if shard < bs:
            raise ValueError("shard_size: %r (%d bytes) is below block_size %d bytes" % (shard_size, shard, bs))
        if shard % bs:
            raise ValueError("shard_size: %r (%d bytes) is not a multiple of block_size %d bytes; use %d or %d"
                             % (shard_size, shard, bs, shard // bs * bs, (shard // bs + 1) * bs))
    else:
        requested = parse_size(total_size, "total_size")
        shard = requested // ranks // bs * bs
        if shard < bs:
            raise ValueError("total_size: %r (%d bytes) over %d ranks is %d bytes per rank, below block_size %d "
                             "bytes; the minimum total_size is %d bytes" % (
                                 total_size, requested, ranks, requested // ranks, bs, bs * ranks))
    return {"shard_bytes": shard, "total_bytes": shard * ranks, "block_size": bs, "ranks": ranks,
            "requested_total_bytes": requested}


def check_directories(directories, name="directories", what="directories"):
    """A non-empty list of absolute paths (existence is the module's business)."""
    if not isinstance(directories, (list, tuple)) or not directories:
        raise ValueError("%s: %r is not a non-empty list of absolute %s" % (name, directories, what))
    for index, path in enumerate(directories):
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError("%s[%d]: %r is not an absolute path" % (name, index, path))
    return list(directories)


def rank_layout(directories, ranks):
    """Ranks spread round-robin over ``directories``: [{rank, directory, name, filename}] (``name`` the shard's
    name in the run's directory; the module sets ``filename``, where it is, and ``fio_file``, what fio opens)."""
    directories = check_directories(directories)
    ranks = int_in_range(ranks, "ranks", 1, MAX_RANKS)
    layout = []
    for rank in range(ranks):
        directory = directories[rank % len(directories)]
        layout.append({"rank": rank, "directory": directory, "name": SHARD_NAME % rank,
                       "filename": directory.rstrip("/") + "/" + SHARD_NAME % rank})
    return layout


def device_layout(devices, ranks, shard_bytes):
    """Ranks spread round-robin over raw block ``devices``, each rank on a region of its own:
    [{rank, directory: None, device, filename, offset}] (the k-th rank of a device starts at k x shard_bytes)."""
    devices = check_directories(devices, "devices", "block devices")
    if len(set(devices)) != len(devices):
        raise ValueError("devices: %r names a device twice" % (devices,))
    ranks = int_in_range(ranks, "ranks", 1, MAX_RANKS)
    layout = []
    for rank in range(ranks):
        device = devices[rank % len(devices)]
        layout.append({"rank": rank, "directory": None, "device": device, "filename": device,
                       "offset": (rank // len(devices)) * shard_bytes})
    return layout


def device_needs(layout, shard_bytes):
    """Bytes each raw device must hold: {device: end of its last rank's region}."""
    needs = {}
    for entry in layout:
        needs[entry["device"]] = max(needs.get(entry["device"], 0), entry["offset"] + shard_bytes)
    return needs


def fio_filename(path):
    """fio separates file names with ':'; a literal colon is escaped as ``\\:``."""
    return path.replace(":", "\\:")


def write_argv(fio_path, layout, shard_bytes, block_size, queue_depth, ioengine, direct, fsync, runtime=None):
    """The fio argv of one checkpoint write: global options, then one job per rank (no group_reporting), each on
    its entry's ``fio_file`` (else ``filename``). ``runtime``: seconds each rank may write at most (``--runtime``
    without ``time_based``: the rank ends at its shard's end or then, whichever comes first)."""
    return _rank_argv("write", fio_path, layout, shard_bytes, block_size, queue_depth, ioengine, direct,
                      ["--end_fsync=%d" % int(bool(fsync))], runtime)


def read_argv(fio_path, layout, shard_bytes, block_size, queue_depth, ioengine, direct):
    """The fio argv of the restore read: each rank reads its whole shard back sequentially, on the same files (or
    device ranges), with the write's block size and queue depth (the layout of :func:`write_argv`)."""
    return _rank_argv("read", fio_path, layout, shard_bytes, block_size, queue_depth, ioengine, direct, [], None)


def _rank_argv(rw, fio_path, layout, shard_bytes, block_size, queue_depth, ioengine, direct, more, runtime):
    queue_depth = int_in_range(queue_depth, "queue_depth", 1, MAX_QUEUE_DEPTH)
    if ioengine not in IOENGINES:
        raise ValueError("ioengine: %r is not one of %s" % (ioengine, ", ".join(IOENGINES)))
    argv = [fio_path, "--output-format=json", "--thread", "--rw=%s" % rw, "--bs=%d" % block_size,
            "--size=%d" % shard_bytes, "--iodepth=%d" % queue_depth, "--ioengine=%s" % ioengine,
            "--direct=%d" % int(bool(direct))] + more + ["--fallocate=none"]
    if runtime is not None:
        argv.append("--runtime=%d" % int_in_range(runtime, "runtime", 1))
    for entry in layout:
        argv.extend(["--name=rank_%d" % entry["rank"],
                     "--filename=%s" % fio_filename(entry.get("fio_file") or entry["filename"])])
        if "offset" in entry:
            argv.append("--offset=%d" % entry["offset"])
    return argv


def _files(filename):
    """One scratch file name or a list of them (one per stream)."""
    files = [filename] if isinstance(filename, str) else list(filename)
    if not files:
        raise ValueError("filenames: no scratch file")
    return files


def layout_argv(fio_path, filename, scratch_bytes, block_size, ioengine, direct):
    """fio argv that writes the sweep's scratch file(s) once, fsynced (every later point overwrites them).

    ``filename``: one path, or one per stream (``scratch_bytes`` each, all written at once).
    """
    argv = [fio_path, "--output-format=json", "--thread", "--rw=write", "--bs=%d" % block_size,
            "--size=%d" % scratch_bytes, "--iodepth=8", "--ioengine=%s" % ioengine, "--direct=%d" % int(bool(direct)),
            "--end_fsync=1", "--fallocate=none"]
    files = _files(filename)
    if len(files) == 1:
        return argv[:3] + ["--name=layout", "--filename=%s" % fio_filename(files[0])] + argv[3:]
    argv.append("--group_reporting")
    for index, path in enumerate(files):
        argv.extend(["--name=layout%d" % index, "--filename=%s" % fio_filename(path)])
    return argv


def sweep_argv(fio_path, filename, depth, scratch_bytes, io_bytes, block_size, ioengine, runtime, direct,
               ramp=0):
    """fio argv of one sweep point: sequential writes over the scratch file(s) at ``depth``.

    ``--runtime`` without ``time_based``: the point ends after ``runtime``
    seconds or ``io_bytes`` written (``io_size``, wrapping over the scratch
    file), whichever comes first. With a list of files, one stream per file
    writes at once (the checkpoint's shape: one per rank, each at ``depth``),
    ``io_bytes`` and ``scratch_bytes`` per stream, reported as one group.
    ``ramp`` > 0: first a ramp group (jobs ``ramp<depth>_rank<n>``, the same
    streams for ``ramp`` seconds or ``io_bytes``), then, after a stonewall,
    the measured group (``qd<depth>_rank<n>``), in one fio process, so a
    drive's burst allowance or write buffer is spent before the measured
    writes start (fio's own ``ramp_time`` is not used: fio 3.33 now and then
    ends a ramped job with nothing or a fraction of the runtime measured).
    """
    files = _files(filename)
    layout = ["--rw=write", "--bs=%d" % block_size, "--size=%d" % scratch_bytes, "--fallocate=none"]
    bounds = ["--io_size=%d" % io_bytes, "--runtime=%d" % runtime]
    engine = ["--iodepth=%d" % depth, "--ioengine=%s" % ioengine, "--direct=%d" % int(bool(direct))]
    if not ramp:
        if len(files) == 1:
            return [fio_path, "--output-format=json", "--thread", "--name=qd%d" % depth,
                    "--filename=%s" % fio_filename(files[0])] + layout + bounds + engine
        argv = [fio_path, "--output-format=json", "--thread"] + layout + bounds + engine + ["--group_reporting"]
        for index, path in enumerate(files):
            argv.extend(["--name=qd%d_rank%d" % (depth, index), "--filename=%s" % fio_filename(path)])
        return argv
    argv = [fio_path, "--output-format=json", "--thread"] + layout + engine + ["--group_reporting"]
    for index, path in enumerate(files):
        argv.extend(["--name=ramp%d_rank%d" % (depth, index), "--filename=%s" % fio_filename(path),
                     "--io_size=%d" % io_bytes, "--runtime=%d" % ramp])
    for index, path in enumerate(files):
        argv.append("--name=qd%d_rank%d" % (depth, index))
        if index == 0:
            argv.extend(["--stonewall", "--new_group"])
        argv.extend(["--filename=%s" % fio_filename(path)] + bounds)
    return argv


def space_errors(needs, margin):
    """Free-space refusals before anything is written.

    ``needs``: [{directory, device, needed, free}] with ``needed`` the bytes
    this run writes on that filesystem and ``free`` its available bytes
    (including what this run replaces). At most ``free x (1 - margin)`` may be
    used. Returns a list of messages (empty when everything fits).
    """
    margin = fraction_in_range(margin, "free_space_margin")
    errors = []
    for entry in needs:
        usable = int(entry["free"] * (1 - margin))
        if entry["needed"] > usable:
            errors.append("%s (device %s): needs %d bytes, free space is %d bytes, of which %d may be used "
                          "(free_space_margin %s)" % (entry["directory"], entry.get("device") or "unknown",
                                                      entry["needed"], entry["free"], usable, margin))
    return errors


def by_target(targets, layout):
    """The layout's entries grouped by the directory they go in (``targets``: {path: an open scratch Target}; two
    paths to one directory are one group): [(target, [entries])], in a stable order."""
    groups = {}
    for entry in layout:
        target = targets[entry["directory"]]
        groups.setdefault((target.dev, target.ino), (target, []))[1].append(entry)
    return [groups[key] for key in sorted(groups)]


def space_needs(layout, bytes_per_rank, targets, devices=None):
    """Bytes needed and free per filesystem (ranks on one filesystem add up): the ``needs`` of :func:`space_errors`
    (``devices``: {directory: its device name}, for the message)."""
    needs = {}
    for entry in layout:
        target = targets[entry["directory"]]
        if target.dev not in needs:
            vfs = os.fstatvfs(target.fd)
            needs[target.dev] = {"directory": entry["directory"], "device": (devices or {}).get(entry["directory"]),
                                 "needed": 0, "free": vfs.f_bavail * vfs.f_frsize}
        needs[target.dev]["needed"] += bytes_per_rank
    return [needs[key] for key in sorted(needs)]


def job_errors(parsed, expected_jobs, direction="write"):
    """Messages for fio output that cannot be reduced: unparsable, a job count mismatch, a job error; ``direction``:
    ``write`` or ``read``, the side of each job that must have moved bytes."""
    if parsed.get("errors", {}).get("_input"):
        return ["fio output is not usable: %s" % parsed["errors"]["_input"]]
    jobs = parsed.get("jobs") or []
    errors = []
    if len(jobs) != expected_jobs:
        errors.append("fio reported %d jobs, %d expected" % (len(jobs), expected_jobs))
    for job in jobs:
        if job.get("error"):
            errors.append("fio job %s: error %s" % (job.get("name"), job.get("error")))
        elif not (job.get(direction) or {}).get("io_bytes"):
            errors.append("fio job %s %s nothing" % (job.get("name"), "wrote" if direction == "write" else "read"))
    return errors


def _seconds(job, direction="write"):
    """A job's runtime in seconds, fio's whole ms; a job that took under 1 ms counts as 1 ms."""
    side = job.get(direction) or {}
    ms = side.get("runtime_ms") or job.get("job_runtime_ms") or 0
    return max(ms, 1) / 1000.0


def reduce_write(parsed, layout, wall_s=None, direction="write"):
    """MLPerf Storage style results of a checkpoint write from ``parse_fio_json`` output.

    Per rank: ``{rank, directory, filename, bytes, seconds, bw_bytes,
    iodepth_max_achieved, p99_ns}`` with ``seconds`` the job's runtime (fio's
    ``write.runtime``, which includes ``end_fsync``) and ``bw_bytes`` =
    bytes / seconds. Node: ``duration_s`` = the slowest rank,
    ``throughput_bytes_s`` = total bytes / ``duration_s`` (the checkpoint is
    saved when its last rank is), ``throughput_gib_s`` the same in GiB/s,
    ``mean_rank_bw_bytes``, ``min_rank_bw_bytes``, ``total_bytes``,
    ``total_gib``, ``p99_ns`` (the highest of the ranks' p99 completion
    latencies, None when fio printed none). ``direction`` ``read``: the same of the restore read (fio's ``read``
    side). Raises ``ValueError`` with every problem found.
    """
    errors = job_errors(parsed, len(layout), direction)
    if errors:
        raise ValueError("; ".join(errors))
    by_name = dict((job.get("name"), job) for job in parsed["jobs"])
    per_rank = []
    for entry in layout:
        job = by_name.get("rank_%d" % entry["rank"])
        if job is None:
            raise ValueError("fio reported no job rank_%d" % entry["rank"])
        written = job[direction]["io_bytes"]
        seconds = _seconds(job, direction)
        per_rank.append({
            "rank": entry["rank"], "directory": entry.get("directory"), "filename": entry["filename"],
            "bytes": written, "seconds": seconds, "bw_bytes": int(written / seconds),
            "iodepth_max_achieved": job.get("iodepth_max_achieved"),
            "p99_ns": job[direction].get("clat_p99_ns"),
        })
    total = sum(r["bytes"] for r in per_rank)
    duration = max(r["seconds"] for r in per_rank)
    bws = [r["bw_bytes"] for r in per_rank]
    throughput = total / duration
    return {
        "per_rank": per_rank,
        "total_bytes": total,
        "total_gib": total / GIB,
        "duration_s": duration,
        "throughput_bytes_s": int(throughput),
        "throughput_gib_s": throughput / GIB,
        "mean_rank_bw_bytes": int(sum(bws) / len(bws)),
        "min_rank_bw_bytes": min(bws),
        "wall_s": wall_s,
        "iodepth_max_achieved": [r["iodepth_max_achieved"] for r in per_rank],
        # The checkpoint waits for its slowest rank: the highest p99 completion latency among the ranks.
        "p99_ns": max([r["p99_ns"] for r in per_rank if r["p99_ns"] is not None] or [None]),
        "fio_version": parsed.get("fio_version"),
    }


def outcome_result(result, layout, outcome, timeout, direction="write"):
    """``result`` completed from fio's ``outcome`` ({rc, stdout, stderr, wall_s, timed_out}); (result, error)."""
    result = dict(result, stderr=outcome['stderr'])
    if outcome.get('lost'):
        return result, 'fio ended without an exit status (killed from outside the module?): %s' % (
            outcome['stderr'].strip() or 'no output')
    if outcome['timed_out']:
        return result, 'fio ran past timeout %d s and was killed' % timeout
    if outcome['rc'] != 0:
        return result, 'fio exited with %s: %s' % (outcome['rc'], outcome['stderr'].strip() or outcome['stdout'][-2000:])
    try:
        result.update(reduce_write(parse_fio_json(outcome['stdout']), layout, round(outcome['wall_s'], 3), direction))
    except ValueError as exc:
        return result, '%s; fio stderr: %s' % (exc, outcome['stderr'].strip())
    return result, None


RESTORE_KEYS = ("throughput_gib_s", "throughput_bytes_s", "duration_s", "total_bytes", "min_rank_bw_bytes",
                "mean_rank_bw_bytes", "wall_s", "p99_ns", "iodepth_max_achieved")


def restore_result(reduced):
    """The ``restore`` of a checkpoint write's result from the read's :func:`reduce_write`: MLPerf Storage's
    recovery (the checkpoint is restored when its slowest rank has read its last byte), per rank bytes and time."""
    out = dict((key, reduced.get(key)) for key in RESTORE_KEYS)
    out["per_rank"] = [dict((key, rank.get(key)) for key in ("rank", "bytes", "seconds", "bw_bytes"))
                       for rank in reduced.get("per_rank") or []]
    return out


def sweep_point(parsed, depth, ramp=0):
    """One curve point ``{depth, bw_bytes, p99_ns, mean_ns, io_bytes, ramp_bytes, seconds}`` from one sweep run.

    ``io_bytes`` and ``seconds``: the measured group's. ``ramp_bytes``: what the
    ramp group (``ramp`` > 0, see :func:`sweep_argv`) wrote before it; 0 without.
    """
    errors = job_errors(parsed, 2 if ramp else 1)
    if errors:
        raise ValueError("depth %d: %s" % (depth, "; ".join(errors)))
    jobs = parsed["jobs"]
    job = jobs[-1]
    write = job["write"]
    ramp_bytes = jobs[0]["write"]["io_bytes"] if ramp else 0
    return {"depth": depth, "bw_bytes": write.get("bw_bytes") or 0, "p99_ns": write.get("clat_p99_ns"),
            "mean_ns": write.get("lat_mean_ns"), "io_bytes": write["io_bytes"], "ramp_bytes": ramp_bytes,
            "seconds": _seconds(job)}


def check_depths(depths):
    """A non-empty list of distinct ints 1..65535, returned in ascending order."""
    if not isinstance(depths, (list, tuple)) or not depths:
        raise ValueError("depths: %r is not a non-empty list of queue depths" % (depths,))
    seen = set()
    for index, depth in enumerate(depths):
        int_in_range(depth, "depths[%d]" % index, 1, MAX_QUEUE_DEPTH)
        if depth in seen:
            raise ValueError("depths[%d]: depth %d is listed twice" % (index, depth))
        seen.add(depth)
    return sorted(depths)


def plateau_reached(bandwidths, gain=0.05, points=2):
    """Whether a sweep may stop early.

    ``bandwidths`` in measured (ascending depth) order. The reference is the
    bandwidth of the last point that beat the previous reference by more than
    ``gain`` (the first point starts it). The sweep stops when the last
    ``points`` points in a row did not: comparing against that reference, not
    the best so far, means gains of 4% a point still add up and count.
    """
    gain = fraction_in_range(gain, "plateau_gain")
    points = int_in_range(points, "plateau_points", 1)
    reference = None
    streak = 0
    for bw in bandwidths:
        if reference is None or bw > reference * (1 + gain):
            reference = bw
            streak = 0
        else:
            streak += 1
    return reference is not None and streak >= points
