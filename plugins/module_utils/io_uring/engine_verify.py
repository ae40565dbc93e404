# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The io_uring engine profile's verification: the fio run that checks a built profile on the node (its argv,
its scratch directory) and the verdict from fio's result (depth reached, bandwidth floor). Pure functions, used by
the ``engine_verify`` module and the ``io_uring_engine`` role's filters; the profile itself is :mod:`engine_profile`'s."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio import parse_fio_json
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring.engine_profile import (
    MAX_RUNTIME_S,
    SCRATCH_NAME,
    VERIFY_MODES,
    _BUCKET_FLOORS,
    _require_int,
    _var,
)


# --- verification ------------------------------------------------------------------------------------------------
def _verify_settings(options):
    mode = (options or {}).get('verify_mode', 'read')
    if mode not in VERIFY_MODES:
        raise ValueError('%s: %r is not one of %s' % (_var('verify_mode'), mode, ', '.join(VERIFY_MODES)))
    runtime = _require_int((options or {}).get('verify_runtime', 10), _var('verify_runtime'), 1, MAX_RUNTIME_S)
    size = parse_size((options or {}).get('verify_size', '1G'), _var('verify_size'))
    allowed = [str(mp).rstrip('/') or '/' for mp in (options or {}).get('allow_mounted_by') or []]
    return mode, runtime, size, allowed


def _scratch_dir(facts_drive, allowed):
    """The collection-owned mount point of a drive (scratch_write mode), or None."""
    for mount_point in (facts_drive or {}).get('mount_points') or []:
        mount_point = mount_point.rstrip('/') or '/'
        if mount_point in allowed:
            return mount_point
    return None


def verify_plan(profile, options=None, drives=None):
    """Per drive of the profile: ``{name, filename, rw, size}`` for the fio verification job.

    Default (``verify_mode: read``): sequential O_DIRECT reads of the raw drive, never a write. With
    ``verify_mode: scratch_write``, a drive whose filesystem is mounted at one of ``allow_mounted_by`` (a
    mount owned by this collection) gets a scratch file there instead: ``{name, directory, scratch, filename:
    None, rw: write, size}``, the file ``scratch`` made by the ``engine_verify`` module in a directory it makes
    for the run in ``directory`` (module_utils/common/scratch.py: no user can redirect it; it is removed afterwards);
    any other drive still gets raw reads. ``size`` is ``verify_size`` capped at the drive size, in whole blocks.
    ``drives`` is the selected drive list of select_drives (mount points, sizes).
    """
    mode, _runtime, size, allowed = _verify_settings(options)
    by_name = dict((drive.get('name'), drive) for drive in drives or [] if isinstance(drive, dict))
    plan = []
    for entry in profile.get('drives') or []:
        facts_drive = by_name.get(entry['name']) or {}
        block = entry['block_size_bytes']
        job_size = size
        if isinstance(facts_drive.get('size_bytes'), int) and facts_drive['size_bytes'] > 0:
            job_size = min(job_size, facts_drive['size_bytes'])
        job_size = max(block, job_size - job_size % block)
        scratch = _scratch_dir(facts_drive, allowed) if mode == 'scratch_write' else None
        if scratch:
            plan.append({'name': entry['name'], 'directory': scratch, 'scratch': SCRATCH_NAME % entry['name'],
                         'filename': None, 'rw': 'write', 'size': job_size})
        else:
            plan.append({'name': entry['name'], 'filename': entry['device'], 'rw': 'read', 'size': job_size})
    return plan


def fio_argv(profile, options=None, drives=None, fio='fio', files=None):
    """The argv of ONE fio run with one job per drive (all drives at once, as a checkpoint burst is).

    Global: JSON output, ``--runtime`` (seconds), ``--thread`` (the jobs are threads of one process, which ends
    with whoever runs it) and, when every job reads, ``--readonly`` (fio refuses any write). Per job: the plan of
    :func:`verify_plan` and the drive's ``fio_options`` from the profile (io_uring, iodepth, bs, direct=1, hipri=0,
    sqthread_poll(+_cpu), registerfiles, fixedbufs, cpus_allowed). A scratch job writes ``files[name]`` (the
    ``/proc/self/fd/<N>`` of the file the engine_verify module made and sized: ``--fallocate=none``); without it
    the argv is refused, since only that module makes the file where no user can redirect it.
    """
    _mode, runtime, _size, _allowed = _verify_settings(options)
    plan = verify_plan(profile, options, drives)
    if not plan:
        raise ValueError('engine_fio_argv: the profile has no drives')
    argv = [fio, '--output-format=json', '--runtime=%d' % runtime, '--thread']
    if all(job['rw'] == 'read' for job in plan):
        argv.append('--readonly')
    by_name = dict((entry['name'], entry) for entry in profile['drives'])
    for job in plan:
        filename = job['filename']
        if job['rw'] == 'write':
            filename = (files or {}).get(job['name'])
            if not filename:
                raise ValueError('engine_fio_argv: %s writes a scratch file in %s, which only the engine_verify '
                                 'module makes (where no other user can redirect it): run the verification with '
                                 'ai_storage.checkpoint_io.engine_verify' % (job['name'], job['directory']))
        argv.extend(['--name=%s' % job['name'], '--filename=%s' % filename, '--rw=%s' % job['rw'],
                     '--size=%d' % job['size']])
        if job['rw'] == 'write':
            argv.extend(['--fallocate=none', '--end_fsync=1'])
        options_of_drive = by_name[job['name']]['fio_options']
        # The engine first: fio only knows an engine's own options (fixedbufs, sqthread_poll...) once
        # ioengine is set.
        for key in sorted(options_of_drive, key=lambda name: (name != 'ioengine', name)):
            argv.append('--%s=%s' % (key, options_of_drive[key]))
    return argv


def _bucket(levels):
    """(floor, key, share%) of the deepest non-empty iodepth_level bucket; (0, None, None) when none."""
    for key, floor in _BUCKET_FLOORS:
        share = (levels or {}).get(key)
        if share:
            return floor, key, share
    return 0, None, None


def _target_floor(depth):
    """The bucket a job with iodepth ``depth`` reaches when it keeps ``depth`` requests in flight."""
    for _key, floor in _BUCKET_FLOORS:
        if depth >= floor:
            return floor
    return 1


def verify_profile(profile, fio_output, options=None, drives=None, block=None):
    """The profile plus the verification: fio's achieved in-flight depth against the target, per drive.

    ``fio_output`` is fio's stdout (``--output-format=json``), or None when fio did not run (check mode,
    ``verify`` off); ``block`` is the ``block`` facts section (nr_requests and the tag depth, reported as the
    cap on what the DRIVE sees). fio counts in-flight requests in power-of-two buckets (16 = 16..31 in flight,
    >=64 = 64 or more), so a target is reached when the deepest non-empty bucket is the target's own bucket:
    exact for powers of two up to 64, a lower bound otherwise. Returns a new dict (the profile is not changed)
    with ``verify`` at the top and in each drive.
    """
    document = copy.deepcopy(profile)
    if fio_output is None:
        document['verify'] = {'ran': False, 'passed': None, 'failures': [],
                              'reason': (options or {}).get('skip_reason') or 'fio did not run'}
        for entry in document['drives']:
            entry['verify'] = None
        return document
    mode, runtime, size, _allowed = _verify_settings(options)
    plan = dict((job['name'], job) for job in verify_plan(profile, options, drives))
    parsed = parse_fio_json(fio_output)
    jobs = dict((job.get('name'), job) for job in parsed.get('jobs') or [])
    disks = dict((disk.get('name'), disk) for disk in parsed.get('disk_util') or [])
    queues = dict((dev.get('name'), dev) for dev in (block or {}).get('devices') or [] if isinstance(dev, dict))
    passed = True
    for entry in document['drives']:
        job = jobs.get(entry['name'])
        job_plan = plan.get(entry['name']) or {}
        target = entry['iodepth']
        result = {'target_depth': target, 'target_bucket_floor': _target_floor(target),
                  'achieved_depth': None, 'achieved_depth_bucket': None, 'achieved_depth_share_pct': None,
                  'reached': False, 'rw': job_plan.get('rw'),
                  'filename': job_plan.get('filename') or job_plan.get('directory'),
                  'bw_bytes': None, 'iops': None, 'clat_p99_ns': None, 'lat_mean_ns': None, 'runtime_ms': None,
                  'io_bytes': None, 'device_avg_queue': None, 'error': None}
        queue = queues.get(entry['name']) or {}
        caps = [(queue.get(key), key) for key in ('nr_requests', 'hw_tag_depth') if isinstance(queue.get(key), int)]
        result['nr_requests'] = queue.get('nr_requests')
        result['hw_tag_depth'] = queue.get('hw_tag_depth')
        result['drive_depth_cap'] = min(caps)[0] if caps else None
        result['capped_by'] = min(caps)[1] if caps and min(caps)[0] < target else None
        if job is None:
            result['error'] = 'fio reported no job %s%s' % (
                entry['name'], ': %s' % parsed['errors'] if parsed.get('errors') else '')
        else:
            stats = job.get(job_plan.get('rw') or 'read') or {}
            floor, key, share = _bucket(job.get('iodepth_level'))
            result.update(achieved_depth=floor, achieved_depth_bucket=key, achieved_depth_share_pct=share,
                          bw_bytes=stats.get('bw_bytes'), iops=stats.get('iops'), clat_p99_ns=stats.get('clat_p99_ns'),
                          lat_mean_ns=stats.get('lat_mean_ns'), runtime_ms=stats.get('runtime_ms'),
                          io_bytes=stats.get('io_bytes'))
            if job.get('error'):
                result['error'] = 'fio job %s ended with error %s' % (entry['name'], job['error'])
            elif not stats.get('io_bytes'):
                result['error'] = 'fio job %s moved no data' % entry['name']
            else:
                result['reached'] = floor >= result['target_bucket_floor']
            disk = disks.get(entry['name']) or {}
            if isinstance(disk.get('in_queue'), int) and stats.get('runtime_ms'):
                result['device_avg_queue'] = round(float(disk['in_queue']) / stats['runtime_ms'], 2)
        passed = passed and result['reached']
        entry['verify'] = result
    document['verify'] = {'ran': True, 'passed': passed, 'reason': None, 'mode': mode, 'runtime_s': runtime,
                          'size_bytes': size, 'fio_version': parsed.get('fio_version')}
    document['verify']['failures'] = depth_failures(document)
    return document


def depth_failures(document):
    """Messages for the drives whose achieved depth is below the target (both numbers named)."""
    messages = []
    for entry in document.get('drives') or []:
        result = entry.get('verify')
        if not result or result.get('reached'):
            continue
        if result.get('error'):
            messages.append('%s (%s): %s' % (entry['name'], entry.get('serial'), result['error']))
            continue
        messages.append('%s (%s): fio kept at most %s requests in flight (iodepth_level bucket %s), target depth %d'
                        % (entry['name'], entry.get('serial'), result.get('achieved_depth'),
                           result.get('achieved_depth_bucket'), result['target_depth']))
    return messages
