#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: queue_depth_sweep
short_description: Measure write bandwidth against queue depth on a checkpoint volume and return the knee
version_added: 0.2.0
description:
  - The measurement behind C(queue_depth) V(auto). Writes the scratch space on the volume once (O(scratch_size),
    fsynced), then measures the queue depths of O(depths), in ascending order, in the checkpoint's shape -
    O(ranks) streams at once (one scratch file each), each writing sequentially with O(block_size) requests,
    O_DIRECT, at that depth, so O(depths) are per-rank depths and the volume sees O(ranks) x depth in flight.
    Each run first writes O(ramp_per_point) seconds unmeasured when that is above 0 (the queue fills and a
    drive's write buffer or burst allowance is spent, so a short run does not report a start-up burst as the
    depth's bandwidth), then ends after O(runtime_per_point) measured seconds or O(size_per_point) bytes (all
    streams together), whichever comes first; each depth is measured O(repeats) times and reported as the
    median with its spread.
  - The chosen depth is the smallest whose median bandwidth is within the noise of the best median (the noise is
    the larger spread of the two points' repeats, at least 1 - O(fraction), so one noisy run cannot decide and
    a depth is not given up for a gain the repeats cannot tell apart). RV(knee) reports it (as an aggregate depth),
    RV(per_rank_depth) the per-rank depth, clamped to 1..O(nr_requests) when given.
  - With O(ranks=1) (a single stream) and O(ranks_per_drive), RV(per_rank_depth) is ceil(knee /
    O(ranks_per_drive)) clamped to 1..O(nr_requests), the estimate for ranks that were not measured together.
  - With O(search=physics) (the default) the sweep does not walk every depth. It measures the first depth of
    O(depths) (its latency) and the last (the ceiling), predicts the knee by Little's Law (ceiling x latency /
    (block x ranks) per rank), then measures only the depths around the prediction, each once, and again (up to
    O(repeats) runs) where its median is too close to the threshold to call, until the smallest listed depth
    within 1 - O(fraction) of the best is found next to one below it. A curve that is not Little's Law (a depth
    measured above the deepest one, from a throttle or a ceiling that moves) is walked instead, and
    RV(search.reason) says why.
  - The walk (O(search=walk), or the fallback) measures the depths in ascending order, O(repeats) runs each, and,
    unless O(exhaustive=true), stops once the bandwidth has not grown by more than O(plateau_gain) over the last
    significant gain for O(plateau_points) depths in a row. Gains are compared with the bandwidth of the last
    significant gain, not the best so far, so several small gains in a row still add up.
  - The scratch files are made in a directory made for the sweep in O(directory)
    (C(.checkpoint_io.<label>.<random>), owned by root, mode 0700) with C(O_CREAT|O_EXCL|O_NOFOLLOW), through
    descriptors opened from C(/) without following a symlink another user could plant, and fio writes them
    through C(/proc/self/fd/<N>), so the user who owns the directory cannot redirect the writes. The run is recorded
    in the state store (record C(scratch)) before anything is made.
  - The scratch files and their directory are removed at the end, also when the sweep fails, times out or the
    module gets SIGTERM, SIGINT or SIGHUP; fio runs as one process (C(--thread)) that dies with the module. What a
    killed sweep left is removed by M(ai_storage.checkpoint_io.checkpoint_job) with
    O(ai_storage.checkpoint_io.checkpoint_job#module:reap=true).
  - Refused before anything is written, with the value and the limit in the message. A directory that is not
    absolute, missing or not a directory, or reached through a symlink in a directory another user can write;
    depths outside 1..65535 or listed twice; O(block_size) not a multiple
    of 4096; O(scratch_size) below O(block_size) or above the free space less O(free_space_margin); O(fraction)
    outside (0, 1]; O(ranks) outside 1..1024; O(repeats) outside 1..20; O(ranks_per_drive) without
    O(nr_requests) or with O(ranks) above 1.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - fio 3.x on the managed node.
notes:
  - The result is a measurement, so C(changed) is always V(false).
  - Check mode is not supported. Ansible skips the task in check mode (a dry run cannot measure anything).
seealso:
  - module: ai_storage.checkpoint_io.checkpoint_write
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ai_storage.checkpoint_io.background_job
attributes:
  check_mode:
    support: none
    details: Ansible skips the task in check mode; it writes data to measure.
  diff_mode:
    support: none
  platform:
    platforms: linux
options:
  directory:
    description:
      - Absolute, existing directory on the checkpoint volume; the sweep's directory with its scratch files is
        made there.
    type: path
    required: true
  block_size:
    description:
      - Size of each write request, a multiple of 4096.
    type: raw
    default: 1M
  depths:
    description:
      - Queue depths to measure, each 1 to 65535, measured in ascending order; per stream when O(ranks) > 1.
    type: list
    elements: int
    default: [1, 2, 4, 8, 16, 32, 64, 128, 256]
  ioengine:
    description:
      - fio I/O engine (V(psync) never has more than one write in flight, whatever the depth).
    type: str
    choices: [io_uring, libaio, psync]
    default: io_uring
  direct:
    description:
      - O_DIRECT writes. Leave V(true); V(false) measures the page cache, not the volume.
    type: bool
    default: true
  ranks:
    description:
      - Streams writing at once, one per rank of the checkpoint, 1 to 1024 (each on its own scratch file of
        O(scratch_size) / O(ranks)).
    type: int
    default: 1
    version_added: 0.2.0
  repeats:
    description:
      - Runs per depth, 1 to 20; the point is their median, their spread is reported and widens the noise.
    type: int
    default: 3
    version_added: 0.2.0
  runtime_per_point:
    description:
      - Most seconds one run of a depth is measured (fio C(runtime)), 1 or more.
    type: int
    default: 3
  ramp_per_point:
    description:
      - Seconds each run writes before the measured writes start, 0 to 3600; 0 measures from the first request.
        For volumes whose drives absorb a burst (a write buffer, a rate limiter's bucket) that a short run would
        report as the depth's bandwidth.
      - The ramp is a first group of the same streams in the same fio process (O(ramp_per_point) seconds or
        O(size_per_point) bytes, whichever comes first), the measured group starts when it ends (the queue
        drains once between them); its bytes count in RV(bytes_written) and RV(curve[].ramp_bytes), its
        seconds in RV(seconds). fio's own C(ramp_time) is not used, since fio 3.33 now and then ends a ramped
        job with nothing or part of the runtime measured (seen on this collection's test hosts).
    type: int
    default: 0
    version_added: 0.2.0
  size_per_point:
    description:
      - Most bytes one run of a depth writes, all streams together (fio C(io_size) per stream, wrapping over its
        scratch file).
    type: raw
    default: 1G
  scratch_size:
    description:
      - Size of the scratch file, written once before the first point.
    type: raw
    default: 1G
  free_space_margin:
    description:
      - Fraction of the free space that must stay free, 0 to below 1; O(scratch_size) above free space x
        (1 - O(free_space_margin)) is refused.
    type: raw
    default: 0.1
  fraction:
    description:
      - Above 0 and at most 1; 1 - O(fraction) is the least noise assumed (the chosen depth's median may be that
        share below the best even when the repeats agree better).
    type: raw
    default: 0.95
  exhaustive:
    description:
      - Measure every depth of O(depths), O(repeats) runs each (the grid a search is compared with).
    type: bool
    default: false
  search:
    description:
      - V(physics) predicts the knee from the first and the last depth and measures around it; V(walk) measures
        the depths in ascending order until the plateau. See the notes.
    type: str
    choices: [physics, walk]
    default: physics
  plateau_gain:
    description:
      - A depth improves the curve when its bandwidth is more than this fraction above the bandwidth of the
        last improving depth.
    type: raw
    default: 0.05
  plateau_points:
    description:
      - Stop after this many depths in a row without improvement of the median (unless O(exhaustive=true)). With
        2, one noisy dip
        on a shared or virtual disk ended a lab sweep at depth 4 where the full grid's knee was 32; 3 rides over one
        dip for one more point.
    type: int
    default: 3
  ranks_per_drive:
    description:
      - With O(ranks=1) only, ranks writing to one drive at the same time. With O(nr_requests),
        RV(per_rank_depth) is returned.
    type: int
  nr_requests:
    description:
      - The drive's C(queue/nr_requests), the upper clamp of RV(per_rank_depth). Required by O(ranks_per_drive).
    type: int
  fio_path:
    description:
      - Path of fio. By default C(fio) is looked up in the PATH (and the module fails clearly when it is missing).
      - Checked before anything is done; an absolute path of an executable file.
    type: path
  timeout:
    description:
      - Seconds one fio run (the scratch layout or one point) may take; past it fio is ended, the scratch files are
        removed and the module fails.
    type: int
    default: 600
  background:
    description:
      - Start the sweep detached (a process of its own, in a session of its own) and return at once with
        RV(job_id); M(ai_storage.checkpoint_io.checkpoint_job) then shows its progress (the depth and run it is
        at, the medians so far) and returns this module's whole result when it ends. Every check above is made
        before it starts. The play then shows progress under any strategy, Mitogen's included.
    type: bool
    default: false
    version_added: 0.2.0
  label:
    description:
      - A name for the background job (its job id starts with it).
    type: str
    version_added: 0.2.0
  job_store:
    description:
      - The root-owned directory of background jobs (made mode 0700 when missing; refused when it is a symlink,
        owned by someone else or writable by group or others).
    type: path
    default: /run/ai_storage_checkpoint_io/jobs
    version_added: 0.2.0
  state_dir:
    description:
      - The collection's state directory, where the sweep's directory is recorded (record C(scratch)) and the
        node's run lease is read.
      - Checked before anything is done; refused when it is not an absolute path, is a symlink or not a directory,
        belongs to another user or is writable by group or others, or holds a record C(scratch) that is not
        valid JSON. A missing one is made (root-owned, mode 0755) on the first write.
    type: path
    default: /var/lib/ai_storage_checkpoint_io
    version_added: 0.3.0
'''

EXAMPLES = r'''
- name: Find the queue depth of the checkpoint volume
  ai_storage.checkpoint_io.queue_depth_sweep:
    directory: /mnt/ckpt0/bench
    ranks_per_drive: 2
    nr_requests: 1023
  register: sweep
  become: true

- name: The checkpoint's shape - 8 ranks at once, each at the depth measured
  ai_storage.checkpoint_io.queue_depth_sweep:
    directory: /mnt/ckpt0/bench
    ranks: 8
    repeats: 3
    depths: [1, 2, 4, 8, 16, 32]
    nr_requests: 1023
  register: sweep

- name: Use it
  ansible.builtin.debug:
    msg: >-
      knee {{ sweep.knee.knee }} ({{ sweep.points }} points, stopped early {{ sweep.stopped_early }});
      per rank {{ sweep.per_rank_depth }}

- name: The same in the background, its progress shown while it runs (see checkpoint_job)
  ai_storage.checkpoint_io.queue_depth_sweep:
    directory: /mnt/ckpt0/bench
    ranks: 8
    background: true
    label: sweep
  register: sweep_job

- name: Full grid with longer points
  ai_storage.checkpoint_io.queue_depth_sweep:
    directory: /mnt/ckpt0/bench
    depths: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    runtime_per_point: 10
    size_per_point: 16G
    exhaustive: true
'''

RETURN = r'''
curve:
  description: One point per measured depth, ascending.
  returned: success
  type: list
  elements: dict
  sample: [{depth: 1, aggregate_depth: 8, bw_bytes: 1100000000, bw_min: 1080000000, bw_max: 1120000000,
            spread: 0.036, repeats: [1080000000, 1100000000, 1120000000], p99_ns: 1400000, mean_ns: 950000,
            io_bytes: 9900000000, ramp_bytes: 3300000000, seconds: 9.0}]
  contains:
    depth:
      description: fio C(iodepth), per stream.
      type: int
      returned: always
    aggregate_depth:
      description: RV(curve[].depth) x O(ranks), the writes in flight on the volume.
      type: int
      returned: always
    bw_bytes:
      description: Median write bandwidth of the repeats, all streams together, bytes per second.
      type: int
      returned: always
    bw_min:
      description: Lowest bandwidth of the repeats.
      type: int
      returned: always
    bw_max:
      description: Highest bandwidth of the repeats.
      type: int
      returned: always
    spread:
      description: (RV(curve[].bw_max) - RV(curve[].bw_min)) / RV(curve[].bw_bytes).
      type: float
      returned: always
    repeats:
      description: The bandwidth of each run, in run order.
      type: list
      elements: int
      returned: always
    p99_ns:
      description: Median of the runs' 99th percentile completion latency, ns.
      type: float
      returned: always
    mean_ns:
      description: Median of the runs' mean total latency, ns.
      type: float
      returned: always
    io_bytes:
      description: Bytes written and measured at this depth, all runs (the ramps not included).
      type: int
      returned: always
    ramp_bytes:
      description: Bytes written in the ramps of this depth's runs, all runs (fio's report of the ramp group); 0
        with O(ramp_per_point=0).
      type: int
      returned: always
      version_added: 0.2.0
    seconds:
      description: fio runtime of all runs of the point (measured seconds, the ramps not included).
      type: float
      returned: always
knee:
  description: The chosen depth as an aggregate (C(knee), per stream x O(ranks)) with C(per_rank) (per stream),
    C(noise) and C(threshold_bw_bytes) (best x (1 - noise)), and the C(knee_depth) fields of the median curve in
    aggregate depths (knee_bw_bytes, best_bw_bytes, best_depth, latency_ns_at_knee, latency_source,
    p99_ns_at_knee, littles_law_depth).
  returned: success
  type: dict
  sample: {knee: 16, per_rank: 2, noise: 0.05, knee_bw_bytes: 6400000000, best_bw_bytes: 6600000000,
           best_depth: 64, fraction: 0.95, threshold_bw_bytes: 6270000000, latency_ns_at_knee: 2600000,
           latency_source: mean_ns, p99_ns_at_knee: 3900000, littles_law_depth: 17}
per_rank_depth:
  description: The chosen per-stream depth, clamped to 1..O(nr_requests) when given; with O(ranks=1) and
    O(ranks_per_drive), ceil(knee / O(ranks_per_drive)) clamped to 1..O(nr_requests) instead.
  returned: success
  type: int
  sample: 8
bytes_written:
  description: Bytes written by the sweep, the scratch layout and the ramps included.
  returned: success
  type: int
  sample: 12884901888
seconds:
  description: Wall time of all fio runs together, the scratch layout included.
  returned: success
  type: float
  sample: 21.4
points:
  description: Number of depths measured (the walk runs each O(repeats) times; the physics search once, or again
    up to O(repeats) where a median is too close to call; RV(search.runs) counts the runs).
  returned: success
  type: int
  sample: 6
stopped_early:
  description: Whether fewer depths than O(depths) were measured (the physics search measures only those around
    its prediction; the walk stops at the plateau).
  returned: success
  type: bool
  sample: true
device:
  description: Block device backing O(directory), V(null) when none (tmpfs, overlay).
  returned: always
  type: str
  sample: md127
block_size:
  description: Request size in bytes.
  returned: always
  type: int
  sample: 1048576
search:
  description: What the depth search did.
  returned: success
  type: dict
  contains:
    method:
      description: V(physics), or V(walk) (asked for, or the physics search's fallback).
      type: str
    reason:
      description: Why the sweep walked; V(null) for the physics search.
      type: str
    predicted_depth:
      description: The per-rank depth Little's Law predicted from the first and the last depth; V(null) without.
      type: int
    measured_depths:
      description: The depths measured, ascending.
      type: list
      elements: int
    runs:
      description: fio runs of the sweep (the scratch layout apart).
      type: int
  sample: {method: physics, reason: null, predicted_depth: 16, measured_depths: [1, 8, 16, 256], runs: 4}
exhaustive:
  description: O(exhaustive) as given.
  returned: always
  type: bool
  sample: false
fio_version:
  description: fio's version string.
  returned: success
  type: str
  sample: fio-3.33
commands:
  description: The fio argv of every run, the scratch layout first.
  returned: always
  type: list
  elements: list
job_id:
  description: The background sweep to poll with M(ai_storage.checkpoint_io.checkpoint_job).
  returned: O(background=true)
  type: str
  sample: sweep.k2j4x9_a
started:
  description: V(true) once the background sweep runs.
  returned: O(background=true)
  type: bool
  sample: true
job_store:
  description: O(job_store) as used.
  returned: O(background=true)
  type: str
  sample: /run/ai_storage_checkpoint_io/jobs
safety:
  description: Where the sweep wrote and why no other user could redirect it.
  returned: when the sweep's directory was made
  type: dict
  contains:
    writable_components:
      description: The directories on the way to O(directory) (itself included) that a user other than root can
        change, C({directory, path, uid, gid, mode, writable_by}) each.
      type: list
      elements: dict
      returned: always
    run_dirs:
      description: The directory made for the sweep (removed with its scratch files).
      type: list
      elements: str
      returned: always
      sample: [/mnt/ckpt0/bench/.checkpoint_io.sweep.0c1d2e3f4a5b]
    swapped_run_dirs:
      description: Run directories another user renamed away in the moment between their mkdir and their open;
        the run made another one, and these stay where that user put them, empty, owned by root, mode 0700.
      type: list
      elements: str
      returned: always
      sample: []
    made_safe_by:
      description: How the sweep is made safe despite them.
      type: str
      returned: always
'''

import os
from functools import partial

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block.alignment_plan import knee_depth, per_rank_depth
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import (
    DEFAULT_DEPTHS,
    IOENGINES,
    block_size_bytes,
    check_depths,
    fraction_in_range,
    int_in_range,
    job_errors,
    number,
    size_at_most,
    layout_argv,
    plateau_reached,
    space_errors,
    sweep_argv,
    sweep_point,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import fio_job
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.depth_search import DepthSearch
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio import parse_fio_json
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import (
    Terminated,
    check_fio_path,
    run_fio,
    terminate_on_signals,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import name_of_dev
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.repeats import (
    median,
    smallest_within_noise,
    summary,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import STATE_DIR
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size


def median_point(measured, depth, ranks):
    """One curve point from the repeats of a depth: medians, the bandwidth's spread, the runs' totals."""
    bws = [m['bw_bytes'] for m in measured]
    stats = summary(bws, 'depth %d' % depth)

    def mid(key):
        values = [m[key] for m in measured if m.get(key) is not None]
        return median(values, key) if values else None
    return {'depth': depth, 'aggregate_depth': depth * ranks, 'bw_bytes': int(stats['median']),
            'bw_min': stats['min'], 'bw_max': stats['max'], 'spread': stats['spread'], 'repeats': bws,
            'p99_ns': mid('p99_ns'), 'mean_ns': mid('mean_ns'), 'io_bytes': sum(m['io_bytes'] for m in measured),
            'ramp_bytes': sum(m.get('ramp_bytes', 0) for m in measured),
            'seconds': round(sum(m['seconds'] for m in measured), 3)}


def argument_spec():
    return dict(
        directory=dict(type='path', required=True),
        block_size=dict(type='raw', default='1M'),
        depths=dict(type='list', elements='int', default=list(DEFAULT_DEPTHS)),
        ioengine=dict(type='str', choices=list(IOENGINES), default='io_uring'),
        direct=dict(type='bool', default=True),
        runtime_per_point=dict(type='int', default=3),
        ramp_per_point=dict(type='int', default=0),
        size_per_point=dict(type='raw', default='1G'),
        scratch_size=dict(type='raw', default='1G'),
        free_space_margin=dict(type='raw', default=0.1),
        fraction=dict(type='raw', default=0.95),
        exhaustive=dict(type='bool', default=False),
        search=dict(type='str', choices=['physics', 'walk'], default='physics'),
        plateau_gain=dict(type='raw', default=0.05),
        plateau_points=dict(type='int', default=3),
        ranks_per_drive=dict(type='int'),
        ranks=dict(type='int', default=1),
        repeats=dict(type='int', default=3),
        nr_requests=dict(type='int'),
        fio_path=dict(type='path'),
        timeout=dict(type='int', default=600),
        background=dict(type='bool', default=False),
        label=dict(type='str'),
        job_store=dict(type='path', default=fio_job.JOB_STORE),
        heartbeat=dict(type='int', default=300),
        state_dir=dict(type='path', default=STATE_DIR),
    )


def validate(module, params, result):
    try:
        values = dict(
            block_size=block_size_bytes(params['block_size']),
            depths=check_depths(params['depths']),
            runtime=int_in_range(params['runtime_per_point'], 'runtime_per_point', 1),
            ramp=int_in_range(params['ramp_per_point'], 'ramp_per_point', 0, 3600),
            io_bytes=size_at_most(params['size_per_point'], 'size_per_point'),
            scratch=parse_size(params['scratch_size'], 'scratch_size'),
        )
        int_in_range(params['timeout'], 'timeout', 1)
        for name in ('free_space_margin', 'fraction', 'plateau_gain'):
            params[name] = number(params[name], name)
        if params['background']:
            fio_job.check_store_path(params['job_store'])
            fio_job.check_heartbeat(params['heartbeat'])
        fraction_in_range(params['free_space_margin'], 'free_space_margin')
        fraction_in_range(params['fraction'], 'fraction', 0.0, 1.0, low_open=True, high_open=False)
        plateau_reached([], params['plateau_gain'], params['plateau_points'])
        int_in_range(params['ranks'], 'ranks', 1, 1024)
        int_in_range(params['repeats'], 'repeats', 1, 20)
        if params['ranks'] > 1 and params['ranks_per_drive'] is not None:
            raise ValueError('ranks_per_drive: goes with ranks 1 only (with ranks %d the sweep measures the ranks '
                             'together)' % params['ranks'])
        if params['ranks_per_drive'] is not None and params['nr_requests'] is None:
            raise ValueError('ranks_per_drive and nr_requests go together (per_rank_depth needs both), got only '
                             'ranks_per_drive')
        if params['ranks_per_drive'] is not None:
            int_in_range(params['ranks_per_drive'], 'ranks_per_drive', 1)
        if params['nr_requests'] is not None:
            int_in_range(params['nr_requests'], 'nr_requests', 1)
        for key, name in (('scratch', 'scratch_size'), ('io_bytes', 'size_per_point')):
            if values[key] < values['block_size']:
                raise ValueError('%s: %r (%d bytes) is below block_size %d bytes'
                                 % (name, params[name], values[key], values['block_size']))
        values['stream_scratch'] = values['scratch'] // params['ranks'] // values['block_size'] * values['block_size']
        values['stream_io'] = max(values['block_size'], values['io_bytes'] // params['ranks'])
        if values['stream_scratch'] < values['block_size']:
            raise ValueError('scratch_size: %r leaves less than one block_size per rank for %d ranks'
                             % (params['scratch_size'], params['ranks']))
        if params['fio_path']:
            check_fio_path(params['fio_path'])
        scratch.check_state_dir(params['state_dir'])
    except (ValueError, fio_job.JobError, scratch.ScratchError) as exc:
        module.fail_json(msg=str(exc), **result)
    return values


class SweepFailed(Exception):
    """A fio run of the sweep that failed; the message says which run and why."""


def scratch_names(ranks):
    return ['rank_%d.scratch' % rank for rank in range(ranks)]


def measure(params, values, fio, result, run, report=None):
    """The sweep itself: the scratch layout, then each depth ``repeats`` times, ascending, until the plateau; the
    scratch files of ``run`` (a scratch.RunDir) removed at the end, whatever ends it.

    Fills ``result`` (commands as they run) and returns it complete; raises SweepFailed. ``report(doc)`` (when
    given) is called before each run with {depth, repeat, repeats, points: [{depth, bw_bytes}], bytes_written,
    seconds, last_bw_bytes}: the progress of a background sweep.
    """
    ranks, repeats = params['ranks'], params['repeats']
    files = [run.fio_file(name) for name in scratch_names(ranks)]
    engine, direct, bs = params['ioengine'], params['direct'], values['block_size']
    by_depth = {}       # depth -> [sweep_point of each run]
    state = dict(written=0, seconds=0.0, last=None)

    def tell(depth, repeat):
        if report is not None:
            points = [median_point(by_depth[d], d, ranks) for d in sorted(by_depth)]
            report(dict(depth=depth, repeat=repeat, repeats=repeats, bytes_written=state['written'],
                        seconds=round(state['seconds'], 3), last_bw_bytes=state['last'],
                        points=[dict(depth=p['depth'], bw_bytes=p['bw_bytes'], spread=p['spread']) for p in points]))

    def run_once(argv, what):
        result['commands'].append(argv)
        rc, stdout, stderr, wall, timed_out = run_fio(argv, params['timeout'], pass_fds=run.fds())
        if timed_out:
            raise SweepFailed('%s: fio ran past timeout %d s and was killed' % (what, params['timeout']))
        if rc != 0:
            raise SweepFailed('%s: fio exited with %d: %s' % (what, rc, stderr.strip() or stdout[-2000:]))
        try:
            return parse_fio_json(stdout), stderr, wall
        except ValueError as exc:
            raise SweepFailed('%s: %s; fio stderr: %s' % (what, exc, stderr.strip()))

    try:
        tell(None, None)
        parsed, stderr, wall = run_once(layout_argv(fio, files, values['stream_scratch'], bs, engine, direct),
                                        'scratch layout')
        errors = job_errors(parsed, 1)
        if errors:
            raise SweepFailed('scratch layout: %s; fio stderr: %s' % ('; '.join(errors), stderr.strip()))
        state['written'] += parsed['jobs'][0]['write']['io_bytes']
        state['seconds'] += wall
        version = parsed['fio_version']
        search = DepthSearch(values['depths'], bs, ranks, floor=1 - params['fraction'], repeats=repeats,
                             walk=params['search'] == 'walk', plateau_gain=params['plateau_gain'],
                             plateau_points=params['plateau_points'], exhaustive=params['exhaustive'])
        depth = search.next_depth()
        while depth is not None:
            argv = sweep_argv(fio, files, depth, values['stream_scratch'], values['stream_io'], bs, engine,
                              values['runtime'], direct, values['ramp'])
            repeat = len(by_depth.get(depth, ())) + 1
            tell(depth, repeat)
            parsed, stderr, wall = run_once(argv, 'depth %d, run %d' % (depth, repeat))
            try:
                point = sweep_point(parsed, depth, values['ramp'])
            except ValueError as exc:
                raise SweepFailed('%s (depth %d, run %d); fio stderr: %s' % (exc, depth, repeat, stderr.strip()))
            by_depth.setdefault(depth, []).append(point)
            state['seconds'] += wall
            state['written'] += point['io_bytes'] + point['ramp_bytes']
            state['last'] = point['bw_bytes']
            search.add(depth, point['bw_bytes'], point.get('mean_ns'))
            depth = search.next_depth()
        runs = [{'depth': d, 'bw': [m['bw_bytes'] for m in by_depth[d]]} for d in sorted(by_depth)]
        curve = [median_point(by_depth[d], d, ranks) for d in sorted(by_depth)]
    except (IOError, OSError) as exc:
        raise SweepFailed('queue depth sweep failed: %s' % exc)
    finally:
        run.cleanup()

    try:
        # the physics search's own choice (the ceiling pooled from every depth past the knee), else the walk's
        choice = search.choice() or smallest_within_noise(runs, floor=1 - params['fraction'])
        aggregate = [dict(p, depth=p['aggregate_depth']) for p in curve]
        # The knee_depth fields (Little's Law, latency) of the median curve; the noise may exceed 100% on a noisy
        # volume (measured on the lab's plain file-backed drives: spreads 0.41-1.89 with 4 ranks, 2 s runs).
        knee = knee_depth(aggregate, max(0.01, 1 - choice['noise']), bs)
    except ValueError as exc:
        result['curve'] = curve
        raise SweepFailed('knee: %s' % exc)
    chosen = next(p for p in curve if p['depth'] == choice['depth'])
    knee.update(knee=chosen['aggregate_depth'], per_rank=chosen['depth'], knee_bw_bytes=chosen['bw_bytes'],
                noise=choice['noise'], threshold_bw_bytes=choice['threshold'], fraction=params['fraction'],
                best_depth=choice['best_depth'] * ranks, p99_ns_at_knee=chosen['p99_ns'])
    if params['ranks_per_drive'] is not None:
        per_rank = per_rank_depth(knee, params['ranks_per_drive'], params['nr_requests'])
    else:
        per_rank = chosen['depth'] if params['nr_requests'] is None else min(chosen['depth'], params['nr_requests'])
    result.update(curve=curve, knee=knee, per_rank_depth=per_rank, bytes_written=state['written'],
                  seconds=round(state['seconds'], 3), points=len(curve),
                  stopped_early=len(curve) < len(values['depths']), fio_version=version, ranks=ranks,
                  repeats=repeats, search=search.summary())
    return result


def background_work(params, values, fio, result, run, report):
    """:func:`measure` in the detached process; a failure carries the partial result (the commands run)."""
    partial_result = dict(result, commands=[])
    try:
        return measure(params, values, fio, partial_result, run, report)
    except SweepFailed as exc:
        exc.result = partial_result
        raise


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=False)
    params = module.params
    directory = params['directory']
    result = dict(changed=False, device=None, block_size=None, exhaustive=params['exhaustive'], commands=[])
    values = validate(module, params, result)
    result['block_size'] = values['block_size']
    try:
        target = scratch.open_dir(directory, 'directory')
    except scratch.ScratchError as exc:
        module.fail_json(msg=str(exc), **result)
    result['device'] = name_of_dev(target.dev)

    vfs = os.fstatvfs(target.fd)
    errors = space_errors([{'directory': directory, 'device': result['device'], 'needed': values['scratch'],
                            'free': vfs.f_bavail * vfs.f_frsize}], params['free_space_margin'])
    if errors:
        module.fail_json(msg='scratch_size: %s' % errors[0], errors=errors, **result)

    fio = params['fio_path'] or module.get_bin_path('fio', required=True)

    run_id = scratch.current_run(params['state_dir'])
    run = None
    handed_over = False
    try:
        with terminate_on_signals():
            try:
                run = scratch.create(target, params['label'] or 'sweep',
                                     [(name, values['stream_scratch']) for name in scratch_names(params['ranks'])],
                                     params['state_dir'], run_id=run_id, writer='queue_depth_sweep')
                result['safety'] = scratch.safety([target], [run])
                if params['background']:
                    record = dict(kind='queue_depth_sweep', label=params['label'], directory=directory,
                                  depths=values['depths'], repeats=params['repeats'], ranks=params['ranks'],
                                  run_id=run_id, state_dir=params['state_dir'])
                    result['job_id'] = fio_job.start_call(
                        partial(background_work, params, values, fio, result, run), record,
                        label=params['label'] or 'sweep', store=params['job_store'],
                        keep_fds=run.fds() + [run.fd, target.fd], heartbeat_s=params['heartbeat'] or None)
                    handed_over = True
                    started = fio_job.load(result['job_id'], params['job_store'])
                    run.set_owner(dict(job_id=result['job_id'], boot_id=scratch.boot_id(), session=started['session'],
                                       worker=started.get('worker')))
                    result.update(started=True, job_store=params['job_store'])
                    module.exit_json(**result)
                measure(params, values, fio, result, run)
            finally:
                if run is not None and handed_over:
                    run.release()  # the worker removes the scratch files; here only the descriptors close
                elif run is not None:
                    run.cleanup()
                target.close()
    except SweepFailed as exc:
        module.fail_json(msg=str(exc), **result)
    except scratch.ScratchError as exc:
        module.fail_json(msg='%s; nothing was written' % exc, **result)
    except (fio_job.JobError, IOError, OSError) as exc:
        module.fail_json(msg='cannot start the queue depth sweep%s: %s' % (
            ' in the background' if params['background'] else '', exc), **result)
    except Terminated as exc:
        module.fail_json(msg='queue depth sweep %s: fio was ended and the scratch files removed' % exc, **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
