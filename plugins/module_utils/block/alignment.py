# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cross-layer queue-depth alignment: DeepSpeed aio, the block layer, XFS and cuFile.

Pure functions of their arguments (standard library plus the collection's ``units`` and
``deepspeed`` helpers), shared by the role, the verification play and the fleet report through
the ``queue_alignment``, ``knee_depth`` and ``per_rank_depth`` filters.

* :func:`check_alignment` - the findings, each with a severity and the fix with the value to set, after
  :func:`alignment_plan.validate_plan` refused a bad plan; each drive's context from the facts is
  :mod:`alignment_facts`'.
* ``queue_depth: auto`` from a measured depth sweep (:func:`knee_depth` / :func:`per_rank_depth`) is in
  :mod:`alignment_plan`.

Units. A rank keeps ``queue_depth`` x ``intra_op_parallelism`` I/Os of ``block_size`` in flight
(each DeepSpeed aio thread owns an aio context of ``queue_depth`` entries). The aggregate depth of a
drive is the sum over the ranks writing to it (per-rank depth x ranks). The block layer counts
REQUESTS, not I/Os: an I/O larger than ``max_sectors_kb`` is split, and md RAID splits at its chunk,
so ``nr_requests`` and the hardware tag depth are compared with the requests in flight
(``aggregate_depth`` x the split factor; the factor is 1 when ``max_sectors_kb`` is unknown).
``nr_requests`` and the tags are per hardware queue: ranks add up on one queue when their
submitting CPUs map to it, which is certain with one queue and the worst case with several.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import render_aio
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import to_int
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block.alignment_plan import (
    ROUND_ROBIN,
    _ceil_div,
    validate_plan,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block.alignment_facts import (
    _block_devices,
    _md_arrays,
    _per_drive,
)

ERROR = 'error'
WARNING = 'warning'
INFO = 'info'

# Finding ids (stable: plays and the fleet report match on them) and their usual severity.
FINDINGS = (
    ('depth_above_nr_requests', ERROR),
    ('aggregate_above_nr_requests', WARNING),
    ('aggregate_above_hw_tag_depth', ERROR),
    ('aggregate_past_saturation', WARNING),
    ('scheduler_not_none', WARNING),
    ('block_size_read_ahead_mismatch', INFO),
    ('block_size_stripe_unit_mismatch', WARNING),
    ('stripe_width_block_size_mismatch', WARNING),
    ('cufile_queue_depth_below_rank_depth', WARNING),
    ('cufile_json_overridden', WARNING),
    ('gds_path_not_dma', ERROR),
    ('deepspeed_config_differs', WARNING),
    ('drive_without_ranks', INFO),
)
FINDING_IDS = tuple(item[0] for item in FINDINGS)

NR_REQUESTS_MAX_WITH_SCHEDULER = 2048  # blk-mq limit for nr_requests when an I/O scheduler is active
NVME_IO_QUEUE_DEPTH_MAX = 4095  # nvme module parameter io_queue_depth range 2..4095
CUFILE_MAX_IO_QUEUE_DEPTH_DEFAULT = 128
CUFILE_QUEUE_KEY = 'execution.max_io_queue_depth'
ETC_CUFILE = '/etc/cufile.json'


def _human_bytes(value):
    for unit, size in (('GiB', 1024 ** 3), ('MiB', 1024 ** 2), ('KiB', 1024)):
        if value >= size and value % size == 0:
            return '%d %s' % (value // size, unit)
    return '%d bytes' % value


def _finding(fid, severity, device, message, fix):
    return {'id': fid, 'severity': severity, 'device': device, 'message': message, 'fix': fix}


def _nr_requests_ceiling(info):
    """Highest nr_requests the kernel accepts on this drive; None when unknown."""
    if info['scheduler'] == 'none':
        return info['hw_tag_depth']
    if info['scheduler']:
        return NR_REQUESTS_MAX_WITH_SCHEDULER
    return None


def _request_note(info):
    if info['requests_per_io'] and info['requests_per_io'] != 1:
        where = []
        if info['via']:
            where.append('md %s at its chunk' % info['via'])
        if info['max_sectors_kb']:
            where.append('max_sectors_kb %d' % info['max_sectors_kb'])
        return '; %g requests per I/O: the block layer splits I/Os at %s' % (
            info['requests_per_io'], ' and '.join(where))
    return ''


def _depth_for(limit, info, plan):
    """Highest aio.queue_depth keeping this drive's requests in flight at or below ``limit``."""
    per_depth = info['requests_in_flight'] / float(plan['queue_depth'])
    return max(1, int(limit // per_depth)) if per_depth else plan['queue_depth']


# ----------------------------------------------------------------------------------------------
# the checks: one small function per finding id
# ----------------------------------------------------------------------------------------------

def check_depth_above_nr_requests(device, info, plan):
    """One rank alone keeps more requests in flight than nr_requests (error)."""
    nr_requests = info['nr_requests']
    if nr_requests is None or info['rank_requests'] <= nr_requests:
        return []
    ceiling = _nr_requests_ceiling(info)
    wanted = max(info['rank_requests'], info['requests_in_flight'])
    if ceiling is not None and wanted > ceiling:
        wanted = ceiling
    fix = 'set nr_requests to %d on %s (after the scheduler: switching the scheduler resets nr_requests)' % (
        wanted, device)
    if ceiling is not None and info['rank_requests'] > ceiling:
        per_depth = info['rank_requests'] / float(plan['queue_depth'])
        fix = ('lower aio.queue_depth to %d: nr_requests cannot go above %d on %s'
               % (max(1, int(ceiling // per_depth)), ceiling, device))
    message = ('%s: one rank keeps %d requests in flight (queue_depth %d x intra_op_parallelism %d%s) but '
               'nr_requests is %d: the kernel throttles submissions above %d before they reach the drive'
               % (device, info['rank_requests'], plan['queue_depth'], plan['intra_op_parallelism'],
                  _request_note(info), nr_requests, nr_requests))
    return [_finding('depth_above_nr_requests', ERROR, device, message, fix)]


def _queue_note(info):
    contexts = info['hw_contexts']
    if contexts and contexts > 1:
        return ('; nr_requests applies per hardware queue and the drive has %d, so this is the worst case, when '
                'the ranks submit from CPUs of the same queue' % contexts)
    return ''


def check_aggregate_above_nr_requests(device, info, plan):
    """All ranks of a drive together exceed nr_requests: requests wait in the block layer (warning)."""
    nr_requests = info['nr_requests']
    if nr_requests is None or info['requests_in_flight'] <= nr_requests or info['ranks'] < 2:
        return []
    ceiling = _nr_requests_ceiling(info)
    wanted = info['requests_in_flight']
    if ceiling is None or wanted <= ceiling:
        fix = ('set nr_requests to %d on %s (after the scheduler: switching the scheduler resets nr_requests)'
               % (wanted, device))
    else:
        fix = ('lower aio.queue_depth to %d (nr_requests cannot go above %d on %s), or spread the ranks over '
               'more drives' % (_depth_for(ceiling, info, plan), ceiling, device))
    message = ('%s: %d ranks x %d = %d requests in flight%s; nr_requests is %d: %d wait in the block layer '
               'instead of the drive%s'
               % (device, info['ranks'], info['rank_requests'], info['requests_in_flight'], _request_note(info),
                  nr_requests, info['requests_in_flight'] - nr_requests, _queue_note(info)))
    return [_finding('aggregate_above_nr_requests', WARNING, device, message, fix)]


def check_aggregate_above_hw_tag_depth(device, info, plan):
    """With scheduler none, more requests in flight than hardware tags (error when certain)."""
    tags = info['hw_tag_depth']
    if info['scheduler'] != 'none' or tags is None or info['requests_in_flight'] <= tags:
        return []
    contexts = info['hw_contexts'] or 1
    # Pigeonhole: at least ceil(ranks / queues) ranks share one hardware queue, whatever the CPUs.
    certain = _ceil_div(info['ranks'], contexts) * info['rank_requests'] > tags
    severity = ERROR if certain else WARNING
    depth = _depth_for(tags, info, plan)
    fix = ('lower aio.queue_depth to %d, or raise the nvme module parameter io_queue_depth (up to %d; '
           'takes effect when the nvme driver reloads) and then nr_requests' % (depth, NVME_IO_QUEUE_DEPTH_MAX))
    message = ('%s: %d requests in flight (%d ranks x %d%s) with scheduler none, above the hardware tag depth '
               '%d: submitters sleep waiting for a tag%s'
               % (device, info['requests_in_flight'], info['ranks'], info['rank_requests'], _request_note(info),
                  tags, '' if certain else
                  ' when their CPUs map to the same one of the %d hardware queues (not certain: that depends on '
                  'where the ranks run)' % contexts))
    return [_finding('aggregate_above_hw_tag_depth', severity, device, message, fix)]


def check_aggregate_past_saturation(device, info, plan):
    """Aggregate depth far past the drive's measured saturation depth (warning)."""
    saturation = info['saturation_depth']
    factor = plan['saturation_factor']
    if not saturation or info['aggregate_depth'] <= factor * saturation:
        return []
    # aggregate I/Os per unit of queue_depth: ranks x intra_op_parallelism on a plain drive
    per_depth = info['aggregate_depth'] / float(plan['queue_depth'])
    depth = max(1, int(math.ceil(saturation / per_depth - 1e-9)))
    message = ('%s: aggregate depth %d (%d ranks x %d) is %.1fx the saturation depth %d measured by the sweep '
               '(limit %sx): deeper queues add latency without throughput'
               % (device, info['aggregate_depth'], info['ranks'], info['rank_depth'],
                  info['aggregate_depth'] / float(saturation), saturation, factor))
    fix = 'lower aio.queue_depth to %d (ceil(saturation %d / %d ranks%s))' % (
        depth, saturation, info['ranks'],
        ' / intra_op_parallelism %d' % plan['intra_op_parallelism'] if plan['intra_op_parallelism'] > 1 else '')
    return [_finding('aggregate_past_saturation', WARNING, device, message, fix)]


def check_scheduler(device, info, plan):
    """An I/O scheduler other than none on a checkpoint drive (warning)."""
    scheduler = info['scheduler']
    if not scheduler or scheduler == 'none':
        return []
    message = ('%s: scheduler %s on a checkpoint drive: it reorders and merges requests and adds CPU work per '
               'I/O; large sequential checkpoint writes on NVMe want none' % (device, scheduler))
    fix = ('set the scheduler of %s to none, then nr_requests (switching the scheduler resets nr_requests)'
           % device)
    return [_finding('scheduler_not_none', WARNING, device, message, fix)]


def check_read_ahead(device, info, plan):
    """block_size vs read_ahead_kb: matters for buffered reads on restore only (info, or warning)."""
    read_ahead = info['read_ahead_kb']
    if read_ahead is None:
        return []
    block_size = plan['block_size']
    ra_bytes = read_ahead * 1024
    if ra_bytes == block_size:
        return []
    divides = bool(ra_bytes) and (block_size % ra_bytes == 0 or ra_bytes % block_size == 0)
    if divides or plan['use_gds']:
        severity = INFO
    else:
        severity = WARNING
    message = ('%s: read_ahead_kb %d (%s) does not match block_size %s; read-ahead only matters for buffered '
               'reads (restoring a checkpoint with torch.load), not for DeepSpeed aio or cuFile (O_DIRECT)%s'
               % (device, read_ahead, 'read-ahead off' if not ra_bytes else _human_bytes(ra_bytes),
                  _human_bytes(block_size), ', and GDS bypasses the page cache' if plan['use_gds'] else ''))
    fix = 'set read_ahead_kb to %d on %s' % (block_size // 1024, device)
    return [_finding('block_size_read_ahead_mismatch', severity, device, message, fix)]


def check_stripe_unit(fs_name, info, plan):
    """block_size not a multiple of the XFS stripe unit (warning)."""
    sunit = info['stripe_unit_bytes']
    block_size = plan['block_size']
    if not sunit or block_size % sunit == 0:
        return []
    message = ('%s: block_size %s is not a multiple of the XFS stripe unit %s: I/Os straddle stripe units and '
               'members get partial chunks' % (fs_name, _human_bytes(block_size), _human_bytes(sunit)))
    fix = ('set aio.block_size to %d (%s), a multiple of the stripe unit, or rebuild the volume with su=%s'
           % (_ceil_div(block_size, sunit) * sunit, _human_bytes(_ceil_div(block_size, sunit) * sunit),
              _human_bytes(block_size)))
    return [_finding('block_size_stripe_unit_mismatch', WARNING, fs_name, message, fix)]


def check_stripe_width(fs_name, info, plan):
    """Neither the XFS stripe width nor block_size a multiple of the other (warning)."""
    swidth = info['stripe_width_bytes']
    block_size = plan['block_size']
    if not swidth or swidth % block_size == 0 or block_size % swidth == 0:
        return []
    message = ('%s: XFS stripe width %s is not a multiple of block_size %s (nor the reverse): successive I/Os '
               'start at different offsets in the stripe and the members are loaded unevenly'
               % (fs_name, _human_bytes(swidth), _human_bytes(block_size)))
    fix = 'set aio.block_size to %d (%s, one full stripe) or a divisor of it that is a multiple of the stripe unit' % (
        swidth, _human_bytes(swidth))
    return [_finding('stripe_width_block_size_mismatch', WARNING, fs_name, message, fix)]


def _gds(facts):
    gds = facts.get('gds')
    return gds if isinstance(gds, dict) else None


def _props(entry):
    if isinstance(entry, dict) and isinstance(entry.get('properties'), dict):
        return entry['properties']
    return None


def cufile_queue_depth(plan, facts):
    """(execution.max_io_queue_depth, where it comes from) as cuFile would use it."""
    if plan['cufile_max_io_queue_depth'] is not None:
        return plan['cufile_max_io_queue_depth'], 'the plan'
    gds = _gds(facts) or {}
    overrides = gds.get('overrides') if isinstance(gds.get('overrides'), dict) else {}
    candidates = []
    if overrides.get('env_path_json'):
        candidates.append((_props(overrides.get('env_file')), overrides['env_path_json']))
    candidates.append((_props(gds.get('cufile_json')), ETC_CUFILE))
    for props, source in candidates:
        if props is not None and props.get(CUFILE_QUEUE_KEY) is not None:
            try:
                return to_int(props[CUFILE_QUEUE_KEY], CUFILE_QUEUE_KEY), source
            except ValueError:
                continue
    return CUFILE_MAX_IO_QUEUE_DEPTH_DEFAULT, 'the cuFile default'


def check_cufile_queue_depth(plan, facts):
    """With GDS, cuFile's max_io_queue_depth below the per-rank queue_depth (warning)."""
    if not plan['use_gds']:
        return []
    depth, source = cufile_queue_depth(plan, facts)
    if depth >= plan['queue_depth']:
        return []
    message = ('cuFile %s is %d (%s) but aio.queue_depth is %d: cuFile keeps at most %d I/Os queued, so the '
               'extra depth DeepSpeed asks for never reaches the drive'
               % (CUFILE_QUEUE_KEY, depth, source, plan['queue_depth'], depth))
    where = ETC_CUFILE if source in ('the plan', 'the cuFile default') else source
    fix = 'set %s to %d in %s (or lower aio.queue_depth to %d)' % (CUFILE_QUEUE_KEY, plan['queue_depth'], where,
                                                                   depth)
    return [_finding('cufile_queue_depth_below_rank_depth', WARNING, None, message, fix)]


def _differing(props, base):
    if props is None or base is None:
        return []
    keys = sorted(set(props) | set(base))
    return ['%s %s (%s %s)' % (key, json.dumps(props.get(key, 'unset')), ETC_CUFILE,
                               json.dumps(base.get(key, 'unset')))
            for key in keys if props.get(key) != base.get(key)]


def check_cufile_overrides(plan, facts):
    """With GDS, per-process cuFile configs that bypass /etc/cufile.json silently (warning each)."""
    if not plan['use_gds']:
        return []
    gds = _gds(facts)
    if gds is None:
        return []
    overrides = gds.get('overrides') if isinstance(gds.get('overrides'), dict) else {}
    base = _props(gds.get('cufile_json'))
    found = []
    if overrides.get('env_path_json'):
        path = overrides['env_path_json']
        found.append((path, _props(overrides.get('env_file')), 'CUFILE_ENV_PATH_JSON is set to it',
                      'put the tuned settings in %s too, or start the job without CUFILE_ENV_PATH_JSON' % path))
    for entry in overrides.get('local_cufile_json') or []:
        if isinstance(entry, dict) and entry.get('path'):
            found.append((entry['path'], _props(entry),
                          "DeepSpeed's GDS handle writes it at every start and points CUFILE_ENV_PATH_JSON at it",
                          'set the cuFile queue through the DeepSpeed aio section (it writes '
                          'execution.max_io_queue_depth = aio.queue_depth and max_io_threads = '
                          'max_request_parallelism = aio.intra_op_parallelism); do not rely on other %s settings '
                          'for DeepSpeed GDS jobs: they fall back to cuFile defaults' % ETC_CUFILE))
    findings = []
    for path, props, how, fix in found:
        diff = _differing(props, base)
        message = ('%s overrides %s for the job (%s): a tuned %s is bypassed without any message%s'
                   % (path, ETC_CUFILE, how, ETC_CUFILE, '; it differs in %s' % '; '.join(diff) if diff else ''))
        findings.append(_finding('cufile_json_overridden', WARNING, None, message, fix))
    return findings


def check_gds_path(plan, facts):
    """use_gds while the GDS path is not dma (error)."""
    if not plan['use_gds']:
        return []
    gds = _gds(facts)
    if gds is None:
        message = ('use_gds is true but the gds facts were not gathered: the GPUDirect path cannot be verified')
        fix = 'gather ansible_facts.checkpoint_io with gather_subset including gds, or set aio.use_gds false'
        return [_finding('gds_path_not_dma', ERROR, None, message, fix)]
    path = gds.get('path')
    if path == 'dma':
        return []
    message = ('use_gds is true but the GDS path is %s (%s): DeepSpeed would run cuFile in compatibility mode '
               '(POSIX I/O through CPU bounce buffers) or fail' % (path, gds.get('path_reason') or 'no reason given'))
    fix = 'set aio.use_gds false, or make GPUDirect usable first (nvidia_fs loaded, NVMe supported in gdscheck -p)'
    return [_finding('gds_path_not_dma', ERROR, None, message, fix)]


def check_deepspeed_configs(plan, facts):
    """ds_config files on the node whose effective aio values differ from the plan (warning each)."""
    deepspeed = facts.get('deepspeed')
    if not isinstance(deepspeed, dict):
        return []
    findings = []
    rendered = render_aio(block_size=plan['block_size'], queue_depth=plan['queue_depth'],
                          intra_op_parallelism=plan['intra_op_parallelism'], use_gds=plan['use_gds'])
    for config in deepspeed.get('configs') or []:
        if not isinstance(config, dict) or not config.get('exists') or config.get('parse_error'):
            continue
        aio = config.get('aio') if isinstance(config.get('aio'), dict) else {}
        truth = config.get('aio_truthiness') if isinstance(config.get('aio_truthiness'), dict) else {}
        diffs = []
        for key in ('queue_depth', 'block_size', 'intra_op_parallelism'):
            if key in aio and aio[key] != plan[key]:
                diffs.append('%s %r (plan %r)' % (key, aio[key], plan[key]))
        use_gds = truth.get('use_gds', aio.get('use_gds'))
        if use_gds is not None and bool(use_gds) != plan['use_gds']:
            diffs.append('use_gds %r (plan %r)' % (aio.get('use_gds'), plan['use_gds']))
        if not diffs:
            continue
        message = ('%s: the aio values DeepSpeed reads differ from the checked plan: %s; the alignment above '
                   'describes the plan, not this config' % (config.get('path'), '; '.join(diffs)))
        fix = 'write "aio": %s in %s' % (json.dumps(rendered, sort_keys=True), config.get('path'))
        findings.append(_finding('deepspeed_config_differs', WARNING, None, message, fix))
    return findings


def check_drive_without_ranks(plan, per_drive, explicit):
    """Selected drives no rank writes to (info)."""
    if not explicit:
        return []
    findings = []
    for drive in plan['drives']:
        if drive in per_drive or any(info['via'] == drive for info in per_drive.values()):
            continue
        findings.append(_finding(
            'drive_without_ranks', INFO, drive,
            '%s: selected but no rank writes to it (%d rank%s over %d drives)'
            % (drive, plan['ranks'], '' if plan['ranks'] == 1 else 's', len(plan['drives'])),
            'map a rank to %s in rank_drives, or drop it from the selection' % drive))
    return findings


DRIVE_CHECKS = (
    check_depth_above_nr_requests,
    check_aggregate_above_nr_requests,
    check_aggregate_above_hw_tag_depth,
    check_aggregate_past_saturation,
    check_scheduler,
    check_read_ahead,
)
FILESYSTEM_CHECKS = (check_stripe_unit, check_stripe_width)
NODE_CHECKS = (check_gds_path, check_cufile_queue_depth, check_cufile_overrides, check_deepspeed_configs)


def known_devices(facts):
    """Device names a plan may map ranks to: the block devices of the facts, then md arrays under XFS."""
    names = list(_block_devices(facts))
    for name in _md_arrays(facts):
        if name not in names:
            names.append(name)
    return names


def check_alignment(facts, plan):
    """Check a checkpoint write plan against the facts of one node.

    ``plan``: {"ranks": int, "rank_drives": "round_robin" | [device per rank] | {rank: device}, "drives":
    selected drives (names, /dev paths or the select_drives result; required for round_robin), "queue_depth",
    "block_size", "intra_op_parallelism", "saturation_depth": {device: int}, "saturation_factor" (2),
    "use_gds", "cufile_max_io_queue_depth"}. A rank may write to an md array found in the xfs facts: its
    I/O is spread over the members by chunk.

    ``facts``: ansible_facts.checkpoint_io with the block section (xfs, gds and deepspeed when gathered).

    Returns {"findings": [{"id", "severity", "device", "message", "fix"}], "per_drive": {drive: {...}},
    "errors": int, "warnings": int, "infos": int, "plan": the normalized plan}.
    Raises ``ValueError`` for a bad plan or facts without a block section.
    """
    block = _block_devices(facts)
    if isinstance(plan, dict) and plan.get('drives') is None and \
            isinstance(plan.get('rank_drives', ROUND_ROBIN), str) and \
            plan.get('rank_drives', ROUND_ROBIN).strip() == ROUND_ROBIN:
        raise ValueError('rank_drives: round_robin needs drives (the selected drives, for example '
                         'selection.selected), so that ranks are never spread over the OS drive')
    normalized = validate_plan(plan, known_devices(facts))
    per_drive = _per_drive(normalized, facts, block)

    findings = []
    for drive, info in per_drive.items():
        for check in DRIVE_CHECKS:
            findings.extend(check(drive, info, normalized))
    seen = []
    for drive, info in per_drive.items():
        if info['filesystem'] and info['filesystem'] not in seen:
            seen.append(info['filesystem'])
            for check in FILESYSTEM_CHECKS:
                findings.extend(check(info['filesystem'], info, normalized))
    for check in NODE_CHECKS:
        findings.extend(check(normalized, facts))
    findings.extend(check_drive_without_ranks(normalized, per_drive, plan.get('drives') is not None))

    counts = dict((severity, 0) for severity in (ERROR, WARNING, INFO))
    for finding in findings:
        counts[finding['severity']] += 1
    return {
        'findings': findings,
        'per_drive': per_drive,
        'errors': counts[ERROR],
        'warnings': counts[WARNING],
        'infos': counts[INFO],
        'plan': normalized,
    }
