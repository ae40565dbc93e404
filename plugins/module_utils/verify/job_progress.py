# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The progress of a background job (a checkpoint write, a sampled sustained write, a queue-depth sweep) in the one
line a person reads while a play waits for it: checkpoint_job returns it as ``progress_line`` and its action plugin
shows it after each wait, so no play needs a task of its own to print it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.thermal.thermal import progress_line as drives_line

GIB = 1073741824.0
MIB = 1048576.0


def _number(value, default=0):
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def write_line(label, progress):
    """``after 1/3: 12.5 s, 3.00 of 64.00 GiB written, 245.8 MiB/s so far`` (the sampled drives after a ``;``)."""
    progress = progress or {}
    if progress.get('phase') == 'restore':
        return '%s: written, %.2f GiB reading back (the restore read), %.1f s' % (
            label or 'write', _number(progress.get('total_bytes')) / GIB, _number(progress.get('restore_elapsed_s')))
    line = '%s: %.1f s, %.2f of %.2f GiB written, %.1f MiB/s so far' % (
        label or 'write', _number(progress.get('elapsed_s')), _number(progress.get('bytes_written')) / GIB,
        _number(progress.get('total_bytes')) / GIB, _number(progress.get('bw_bytes_so_far')) / MIB)
    if progress.get('drives') is not None:
        line += '; ' + drives_line(progress['drives'])
    return line


def _mebibytes(value):
    """52428800 -> ``50.0 MiB/s``."""
    return '%.1f MiB/s' % (_number(value) / MIB)


def sweep_line(progress):
    """``queue-depth sweep, 35 s: depth 8 per rank, run 1 of 1, last run 50.0 MiB/s; medians so far 1: 12.1 MiB/s, ...``"""
    progress = progress or {}
    if progress.get('depth') is None:
        where = 'writing the scratch files'
    else:
        where = 'depth %s per rank, run %s of %s' % (
            progress['depth'], progress.get('repeat'), progress.get('repeats'))
    if progress.get('last_bw_bytes'):
        where += ', last run ' + _mebibytes(progress['last_bw_bytes'])
    points = ', '.join('%s: %s' % (point.get('depth'), _mebibytes(point.get('bw_bytes')))
                       for point in progress.get('points') or [] if isinstance(point, dict))
    return 'queue-depth sweep, %d s: %s; medians so far (depth: bandwidth) %s' % (
        int(round(_number(progress.get('elapsed_s')))), where, points or 'none')


def line(kind, label, progress):
    """The line for a job of ``kind`` (``checkpoint_write`` or ``queue_depth_sweep``, the job record's)."""
    if kind == 'queue_depth_sweep':
        return sweep_line(progress)
    return write_line(label, progress)
