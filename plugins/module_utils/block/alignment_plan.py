# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of the cross-layer queue-depth alignment, checked before any check runs, and ``queue_depth: auto``.

Pure functions of their arguments, used by :mod:`alignment` (the checks) and the ``knee_depth`` and
``per_rank_depth`` filters.

* :func:`validate_plan` - refuses a bad plan (ranks, rank-to-drive mapping, depth, block size)
  with a ``ValueError`` naming the value and the limit, BEFORE any check runs.
* :func:`knee_depth` / :func:`per_rank_depth` - ``queue_depth: auto`` from a measured depth sweep.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
from operator import itemgetter

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import AIO_DEFAULTS_DICT
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size, to_bool, to_int


QUEUE_DEPTH_MAX = 65535
RANKS_MAX = 1024  # ranks per node
SATURATION_FACTOR_DEFAULT = 2
ALIGNMENT = 4096  # O_DIRECT (DeepSpeed aio, cuFile) needs 4 KiB aligned sizes

PLAN_KEYS = ('ranks', 'rank_drives', 'drives', 'queue_depth', 'block_size', 'intra_op_parallelism',
             'saturation_depth', 'saturation_factor', 'use_gds', 'cufile_max_io_queue_depth')
ROUND_ROBIN = 'round_robin'


# ----------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------

def _dev_name(value, what='device'):
    """``/dev/nvme1n1`` or ``nvme1n1`` -> ``nvme1n1``."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError('%s: %r is not a device name (nvme1n1 or /dev/nvme1n1)' % (what, value))
    name = value.strip()
    if name.startswith('/dev/'):
        name = name[len('/dev/'):]
    if not name or '/' in name:
        raise ValueError('%s: %r is not a device name (nvme1n1 or /dev/nvme1n1)' % (what, value))
    return name


def _names(names):
    return ', '.join(names) if names else '(none)'


def _int_in_range(value, name, low, high=None):
    if isinstance(value, bool):
        raise ValueError('%s: %r is not an integer' % (name, value))
    number = to_int(value, name)
    if number < low or (high is not None and number > high):
        if high is None:
            raise ValueError('%s: %r is out of range: it must be >= %d' % (name, value, low))
        raise ValueError('%s: %r is out of range %d..%d' % (name, value, low, high))
    return number


def _ceil_div(numerator, denominator):
    return -(-numerator // denominator)


def _drive_list(drives):
    """Selected drives given as names, /dev paths, select_drives entries or the select_drives result."""
    if isinstance(drives, dict):
        if 'selected' not in drives:
            raise ValueError('drives: a dict must be the select_drives result (with "selected"), got keys %s'
                             % _names(sorted(str(k) for k in drives)))
        drives = drives['selected']
    if not isinstance(drives, (list, tuple)) or not drives:
        raise ValueError('drives: %r is not a non-empty list of device names' % (drives,))
    names = []
    for index, item in enumerate(drives):
        if isinstance(item, dict):
            item = item.get('name') or item.get('device')
        name = _dev_name(item, 'drives[%d]' % index)
        if name in names:
            raise ValueError('drives: %s is listed twice' % name)
        names.append(name)
    return names


# ----------------------------------------------------------------------------------------------
# plan validation
# ----------------------------------------------------------------------------------------------

def _rank_mapping(value, ranks, drives, scope):
    """One device name per rank (index = rank)."""
    if isinstance(value, str) and value.strip() == ROUND_ROBIN:
        return [drives[rank % len(drives)] for rank in range(ranks)]
    if isinstance(value, str):
        raise ValueError('rank_drives: %r is not a mapping; use %r, a list of one device per rank or a dict '
                         '{rank: device}' % (value, ROUND_ROBIN))
    if isinstance(value, (list, tuple)):
        if len(value) != ranks:
            raise ValueError('rank_drives: the list has %d entries but ranks is %d: give one device per rank '
                             '(rank 0 first)' % (len(value), ranks))
        mapping = dict(enumerate(value))
    elif isinstance(value, dict):
        mapping = {}
        for key, device in value.items():
            if isinstance(key, bool):
                raise ValueError('rank_drives: key %r is not a rank index' % (key,))
            try:
                index = to_int(key, 'rank_drives key')
            except ValueError:
                raise ValueError('rank_drives: key %r is not a rank index (0..%d)' % (key, ranks - 1))
            if index < 0 or index >= ranks:
                raise ValueError('rank_drives: rank %r is out of range 0..%d (ranks is %d)'
                                 % (key, ranks - 1, ranks))
            if index in mapping:
                raise ValueError('rank_drives: rank %d is given twice' % index)
            mapping[index] = device
        missing = [str(rank) for rank in range(ranks) if rank not in mapping]
        if missing:
            raise ValueError('rank_drives: ranks %s have no drive (ranks is %d: map every rank 0..%d)'
                             % (', '.join(missing), ranks, ranks - 1))
    else:
        raise ValueError('rank_drives: %r is not a mapping; use %r, a list of one device per rank or a dict '
                         '{rank: device}' % (value, ROUND_ROBIN))
    result = []
    for rank in range(ranks):
        name = _dev_name(mapping[rank], 'rank_drives: rank %d' % rank)
        if name not in drives:
            raise ValueError('rank_drives: rank %d writes to %s, which is not among the %s drives (%s)'
                             % (rank, name, scope, _names(drives)))
        result.append(name)
    return result


def validate_plan(plan, devices):
    """Check and normalize ``plan`` against ``devices`` (the selected or known device names).

    Raises ``ValueError`` naming the value and the limit for: a plan that is not a dict or has unknown
    keys, ``ranks`` not a positive integer, ``drives`` not among ``devices``, a rank mapped to a device
    that is not among the drives, rank indexes out of range or missing, a list of another length than
    ``ranks``, ``queue_depth`` outside 1..65535, a ``block_size`` that is not a size (``"1X"``) or not a
    multiple of 4096, and bad ``saturation_depth``, ``use_gds`` or ``cufile_max_io_queue_depth`` values.

    Missing ``queue_depth``, ``block_size`` and ``intra_op_parallelism`` take DeepSpeed's aio defaults;
    ``rank_drives`` defaults to ``round_robin`` over ``drives`` (else over ``devices``).

    Returns {"ranks", "drives", "rank_drives" (one device per rank), "queue_depth", "block_size" (bytes),
    "intra_op_parallelism", "rank_depth" (queue_depth x intra_op_parallelism), "saturation_depth" ({device:
    int}), "saturation_factor", "use_gds", "cufile_max_io_queue_depth" (int or None)}.
    """
    if not isinstance(plan, dict):
        raise ValueError('plan: expected a dict, got %s' % type(plan).__name__)
    unknown = sorted(str(key) for key in plan if key not in PLAN_KEYS)
    if unknown:
        raise ValueError('plan: unknown keys %s (known: %s)' % (', '.join(unknown), ', '.join(PLAN_KEYS)))
    if isinstance(devices, (str, bytes)) or not isinstance(devices, (list, tuple, set, frozenset)):
        raise ValueError('devices: expected a list of device names, got %r' % (devices,))
    known = []
    for index, item in enumerate(devices):
        name = _dev_name(item, 'devices[%d]' % index)
        if name not in known:
            known.append(name)

    if plan.get('ranks') is None:
        raise ValueError('ranks: not set; give the number of ranks per node (a positive integer)')
    ranks = plan['ranks']
    try:
        if isinstance(ranks, bool):
            raise ValueError(ranks)
        ranks = to_int(ranks, 'ranks')
    except ValueError:
        raise ValueError('ranks: %r is not a positive integer' % (plan['ranks'],))
    if ranks < 1 or ranks > RANKS_MAX:
        raise ValueError('ranks: %r is out of range 1..%d (ranks per node)' % (plan['ranks'], RANKS_MAX))

    if plan.get('drives') is not None:
        drives = _drive_list(plan['drives'])
        for name in drives:
            if name not in known:
                raise ValueError('drives: %s is not among the known devices (%s)' % (name, _names(known)))
        scope = 'selected'
    else:
        drives = known
        scope = 'known'
    if not drives:
        raise ValueError('drives: no devices to map ranks to (the facts list no block devices)')

    rank_drives = _rank_mapping(plan.get('rank_drives', ROUND_ROBIN), ranks, drives, scope)

    queue_depth = plan.get('queue_depth')
    if queue_depth is None:
        queue_depth = AIO_DEFAULTS_DICT['queue_depth']
    queue_depth = _int_in_range(queue_depth, 'queue_depth', 1, QUEUE_DEPTH_MAX)

    block_size = plan.get('block_size')
    if block_size is None:
        block_size = AIO_DEFAULTS_DICT['block_size']
    block_size = parse_size(block_size, 'block_size')
    if block_size % ALIGNMENT:
        raise ValueError('block_size: %d bytes is not a multiple of %d (DeepSpeed aio and cuFile use O_DIRECT, '
                         'which needs aligned sizes); use for example %d'
                         % (block_size, ALIGNMENT, _ceil_div(block_size, ALIGNMENT) * ALIGNMENT))

    parallelism = plan.get('intra_op_parallelism')
    if parallelism is None:
        parallelism = AIO_DEFAULTS_DICT['intra_op_parallelism']
    parallelism = _int_in_range(parallelism, 'intra_op_parallelism', 1, 1024)

    saturation = {}
    raw = plan.get('saturation_depth')
    if raw is not None:
        if not isinstance(raw, dict):
            raise ValueError('saturation_depth: expected a dict {device: depth}, got %r' % (raw,))
        for key, value in raw.items():
            name = _dev_name(key, 'saturation_depth key')
            if name not in known:
                raise ValueError('saturation_depth: %s is not among the known devices (%s)' % (name, _names(known)))
            saturation[name] = _int_in_range(value, 'saturation_depth[%s]' % name, 1, QUEUE_DEPTH_MAX)

    factor = plan.get('saturation_factor')
    if factor is None:
        factor = SATURATION_FACTOR_DEFAULT
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or math.isnan(factor) or factor < 1:
        raise ValueError('saturation_factor: %r is not a number >= 1' % (factor,))

    use_gds = plan.get('use_gds')
    use_gds = False if use_gds is None else to_bool(use_gds, 'use_gds')

    cufile_depth = plan.get('cufile_max_io_queue_depth')
    if cufile_depth is not None:
        cufile_depth = _int_in_range(cufile_depth, 'cufile_max_io_queue_depth', 1, QUEUE_DEPTH_MAX)

    return {
        'ranks': ranks,
        'drives': drives,
        'rank_drives': rank_drives,
        'queue_depth': queue_depth,
        'block_size': block_size,
        'intra_op_parallelism': parallelism,
        'rank_depth': queue_depth * parallelism,
        'saturation_depth': saturation,
        'saturation_factor': factor,
        'use_gds': use_gds,
        'cufile_max_io_queue_depth': cufile_depth,
    }


# ----------------------------------------------------------------------------------------------
# queue_depth: auto
# ----------------------------------------------------------------------------------------------

def _number(value, name, integral=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        raise ValueError('%s: %r is not a number' % (name, value))
    if integral and not float(value).is_integer():
        raise ValueError('%s: %r is not a whole number' % (name, value))
    if value < 0:
        raise ValueError('%s: %r is negative' % (name, value))
    return int(value) if integral else value


def knee_depth(curve, fraction=0.95, block_size=None):
    """The knee of a measured depth sweep.

    ``curve``: [{"depth": int >= 1, "bw_bytes": bytes/s, "p99_ns": ns, "mean_ns": ns (optional)}, ...] in
    any order. The knee is the smallest depth whose bandwidth reaches ``fraction`` (0 < f <= 1) of the best.
    With ``block_size``, Little's Law gives the depth the best bandwidth needs at the knee's latency:
    ceil(best_bw x latency / block_size), latency = mean_ns when measured, else p99_ns (an upper bound).

    Returns {"knee", "knee_bw_bytes", "best_bw_bytes", "best_depth", "fraction", "threshold_bw_bytes",
    "latency_ns_at_knee", "latency_source", "p99_ns_at_knee", "littles_law_depth" (None without block_size
    or latency)}. Raises ``ValueError`` for an empty or garbled curve.
    """
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ValueError('fraction: %r is out of range: it must be above 0 and at most 1' % (fraction,))
    if not isinstance(curve, (list, tuple)) or not curve:
        raise ValueError('curve: %r is not a non-empty list of points {depth, bw_bytes, p99_ns}' % (curve,))
    points = []
    depths = set()
    for index, point in enumerate(curve):
        where = 'curve[%d]' % index
        if not isinstance(point, dict):
            raise ValueError('%s: %r is not a point {depth, bw_bytes, p99_ns}' % (where, point))
        for key in ('depth', 'bw_bytes'):
            if key not in point:
                raise ValueError('%s: %s is missing (a point needs depth and bw_bytes, and p99_ns or mean_ns for '
                                 "Little's Law)" % (where, key))
        depth = _number(point['depth'], '%s.depth' % where, integral=True)
        if depth < 1:
            raise ValueError('%s.depth: %r is out of range: it must be >= 1' % (where, point['depth']))
        if depth in depths:
            raise ValueError('%s.depth: depth %d is measured twice' % (where, depth))
        depths.add(depth)
        entry = {'depth': depth, 'bw_bytes': _number(point['bw_bytes'], '%s.bw_bytes' % where)}
        for key in ('p99_ns', 'mean_ns'):
            entry[key] = None if point.get(key) is None else _number(point[key], '%s.%s' % (where, key))
        points.append(entry)
    points.sort(key=itemgetter('depth'))
    best = points[0]
    for point in points:
        if point['bw_bytes'] > best['bw_bytes']:
            best = point
    if best['bw_bytes'] <= 0:
        raise ValueError('curve: no point has a bandwidth above 0 (bw_bytes all 0): nothing was measured')
    threshold = fraction * best['bw_bytes']
    knee = next(p for p in points if p['bw_bytes'] >= threshold)
    if knee['mean_ns'] is not None:
        latency, source = knee['mean_ns'], 'mean_ns'
    elif knee['p99_ns'] is not None:
        latency, source = knee['p99_ns'], 'p99_ns'
    else:
        latency, source = None, None
    littles = None
    if block_size is not None:
        size = parse_size(block_size, 'block_size')
        if latency is not None:
            littles = max(1, int(math.ceil(best['bw_bytes'] * latency / 1e9 / size - 1e-9)))
    return {
        'knee': knee['depth'],
        'knee_bw_bytes': knee['bw_bytes'],
        'best_bw_bytes': best['bw_bytes'],
        'best_depth': best['depth'],
        'fraction': fraction,
        'threshold_bw_bytes': threshold,
        'latency_ns_at_knee': latency,
        'latency_source': source,
        'p99_ns_at_knee': knee['p99_ns'],
        'littles_law_depth': littles,
    }


def per_rank_depth(knee, ranks_per_drive, nr_requests):
    """ceil(knee / ranks_per_drive) clamped to [1, nr_requests]; ``knee`` may be the knee_depth result."""
    if isinstance(knee, dict):
        if 'knee' not in knee:
            raise ValueError('knee: a dict must be the knee_depth result (with "knee"), got keys %s'
                             % _names(sorted(str(k) for k in knee)))
        knee = knee['knee']
    knee = _int_in_range(knee, 'knee', 1)
    ranks = _int_in_range(ranks_per_drive, 'ranks_per_drive', 1)
    limit = _int_in_range(nr_requests, 'nr_requests', 1)
    return max(1, min(_ceil_div(knee, ranks), limit))
