# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checkpoint-write verification's arithmetic (the verify_checkpoint_write role; filters in
plugins/filter/verification.py): the aio settings a side writes with, the checkpoint's shape, the block queue
settings it ran under, "before" from the baseline or the replay, and the published report. Pure functions over
facts and measurements; the writes themselves are the checkpoint_write module's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.blockdev import OS_MOUNT_POINTS
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import AIO_DEFAULTS_DICT
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import force_names, named_by
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import node_identities

GIB = 1024 ** 3
BLOCK = 1024 * 1024          # the shards are whole 1 MiB blocks per rank
QUEUE_KEYS = ('scheduler', 'nr_requests', 'read_ahead_kb', 'max_sectors_kb', 'nomerges', 'rq_affinity', 'io_poll')
SETTING_KEYS = ('queue_depth', 'block_size', 'intra_op_parallelism')


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def aio_settings(facts):
    """The aio settings the ranks write with: the first ds_config of the ``deepspeed`` facts that exists and parses,
    else DeepSpeed's own defaults (module_utils/deepspeed/deepspeed.py); ``source`` says which."""
    configs = section(facts, 'deepspeed').get('configs') or []
    found = next((c for c in configs if isinstance(c, dict) and c.get('exists') and not c.get('parse_error')), None)
    aio = (found or {}).get('aio') or {}
    settings = dict((key, aio[key] if _number(aio.get(key)) else AIO_DEFAULTS_DICT[key]) for key in SETTING_KEYS)
    settings['source'] = ('the aio section of %s' % found['path']) if found else \
        'DeepSpeed defaults (no ds_config found)'
    return settings


ENGINES = ('auto', 'fio', 'deepspeed')
# the writer keys the fastpersist_write module takes (what a rank's FastFileWriter reads of checkpoint.writer)
ENGINE_WRITER_KEYS = ('io_buffer_size', 'io_buffer_double')


def writer_settings(facts):
    """The ``checkpoint.writer`` keys a rank's FastFileWriter reads (io_buffer_size, io_buffer_double) of the first
    ds_config of the ``deepspeed`` facts that exists and parses; {} where it has no writer section (DeepSpeed's
    defaults then)."""
    configs = section(facts, 'deepspeed').get('configs') or []
    found = next((c for c in configs if isinstance(c, dict) and c.get('exists') and not c.get('parse_error')), None)
    writer = (found or {}).get('writer') or {}
    return dict((key, writer[key]) for key in ENGINE_WRITER_KEYS if writer.get(key) is not None)


RUN_KEYS = ('throughput_gib_s', 'duration_s', 'wall_s', 'p99_ns', 'min_rank_bw_bytes', 'total_bytes',
            'iodepth_max_achieved', 'restore_gib_s')


def fastpersist_runs(result):
    """The figures the verification keeps of each run (RUN_KEYS, as a checkpoint_write run gives them) from one
    fastpersist_write result with ``repeats``: no p99 or depth (DeepSpeed reports neither), ``wall_s`` the
    processes' whole wall time shared out over the runs, ``restore_gib_s`` the run's restore read (None where
    none was asked)."""
    if not isinstance(result, dict) or not isinstance(result.get('runs'), list) or not result['runs']:
        raise ValueError('expected a fastpersist_write result with its runs, got %r' % (result,))
    wall = result.get('wall_s')
    share = round(wall / len(result['runs']), 3) if _number(wall) else None
    return [{'throughput_gib_s': run.get('throughput_gib_s'), 'duration_s': run.get('duration_s'), 'wall_s': share,
             'p99_ns': None, 'min_rank_bw_bytes': run.get('min_rank_bw_bytes'), 'total_bytes': run.get('total_bytes'),
             'iodepth_max_achieved': None,
             'restore_gib_s': (run.get('restore') or {}).get('throughput_gib_s')} for run in result['runs']]


def verify_engine(facts, asked='auto'):
    """What writes the verification's checkpoints: {engine, reason, python, deepspeed_version}. ``deepspeed``
    (DeepSpeed's own FastPersist writer, module fastpersist_write) where the training environment's Python of the
    ``deepspeed`` facts (checkpoint_io_deepspeed_python) has DeepSpeed with FastPersist (0.17.1 and later), asked or
    ``auto``; ``fio`` elsewhere, saying why. ValueError where ``deepspeed`` is asked and the node has none."""
    if asked not in ENGINES:
        raise ValueError('checkpoint_io_verify_engine: %r is not one of %s' % (asked, ', '.join(ENGINES)))
    found = section(facts, 'deepspeed').get('installed') or {}
    python, version = found.get('python'), found.get('version')
    out = {'engine': 'fio', 'python': python, 'deepspeed_version': version}
    if found.get('fastpersist') and python and version:
        why = None
    elif found.get('error'):
        why = found['error']
    elif version:
        why = 'DeepSpeed %s in %s has no FastPersist writer (0.17.1 and later)' % (version, python)
    else:
        why = 'the deepspeed facts were not gathered'
    if asked == 'fio':
        return dict(out, reason='fio, as checkpoint_io_verify_engine asks')
    if why is None:
        return dict(out, engine='deepspeed', reason="DeepSpeed %s's FastPersist writer, run by %s%s" % (
            version, python, ' (checkpoint_io_verify_engine deepspeed)' if asked == 'deepspeed' else ''))
    if asked == 'deepspeed':
        raise ValueError('checkpoint_io_verify_engine deepspeed: %s. Set checkpoint_io_deepspeed_python to a training '
                         "environment's Python with DeepSpeed 0.17.1 or later, or leave the engine auto (fio here)"
                         % why)
    return dict(out, reason='fio: %s' % why)


def checkpoint_shape(avail_bytes, ranks, full_size, share, asked=False):
    """{ranks, total_bytes}: MLPerf Storage's checkpoint (``full_size`` over ``ranks``) scaled down to ``share`` of
    the space there is, in whole 1 MiB blocks per rank. Raises ValueError when not one block per rank fits.
    ``asked``: the size is the user's (checkpoint_io_verify_total_size set), never scaled down: one that does not fit
    in ``share`` of the space is refused, naming the limit."""
    ranks, avail, full = int(ranks), int(avail_bytes), int(full_size)
    if ranks < 1:
        raise ValueError('ranks: %r is below the minimum 1' % (ranks,))
    unit = ranks * BLOCK
    room = int(avail * float(share))
    if asked and full > room:
        raise ValueError('checkpoint_io_verify_total_size: %d bytes does not fit: at most %d bytes (%s of the %d bytes '
                         'free) may be written; lower it, raise checkpoint_io_verify_free_share, or leave the size '
                         'unset to scale the default checkpoint to the space' % (full, room, share, avail))
    total = min(full, room) // unit * unit
    if total <= 0:
        raise ValueError('%d bytes free x share %s leave less than one 1 MiB block for each of the %d ranks: free '
                         'some space or lower checkpoint_io_verify_ranks' % (avail, share, ranks))
    return {'ranks': ranks, 'total_bytes': total}


def queue_settings(facts, names):
    """{device: {scheduler, nr_requests, ...}} of the block facts of ``names`` (the queues a write ran under)."""
    devices = section(facts, 'block').get('devices') or []
    wanted = set(names or [])
    return dict((d['name'], dict((k, d[k]) for k in QUEUE_KEYS if k in d))
                for d in devices if isinstance(d, dict) and d.get('name') in wanted)


def before_side(baseline, settings_before, directories, replayed=None):
    """The "before" of the report: the baseline measured before any role ran, or - where none was recorded - the
    settings found before tuning replayed now on the tuned volume (``replayed``: its repeated write)."""
    baseline = baseline or {'where': 'none', 'reason': 'no baseline recorded on this node'}
    if baseline.get('where', 'none') != 'none':
        keys = ('where', 'target', 'settings', 'ranks', 'total_bytes', 'devices', 'runs', 'block', 'throughput_gib_s',
                'p99_ns', 'restore_gib_s')
        side = dict((key, baseline.get(key)) for key in keys)
        side.update(source='baseline', what='%s, measured %s before any role ran'
                    % (baseline.get('reason'), baseline.get('measured_at')))
        return side
    if not replayed:
        raise ValueError('no baseline recorded and no replayed write: nothing to compare with')
    last = replayed.get('last') or {}
    return {'source': 'replayed', 'where': 'directory', 'target': list(directories),
            'what': 'the settings found before tuning (%s) replayed now on the tuned volume (%s): the io_uring, block '
                    'layer and xfs changes are not in this ratio' % (settings_before.get('source'),
                                                                     baseline.get('reason')),
            'settings': settings_before, 'ranks': last.get('ranks'), 'total_bytes': last.get('total_bytes'),
            'devices': last.get('devices'), 'runs': replayed.get('runs'), 'block': None,
            'throughput_gib_s': replayed.get('throughput_gib_s'), 'p99_ns': replayed.get('p99_ns'),
            'restore_gib_s': replayed.get('restore_gib_s')}


def _ratio(a, b):
    return round(a / b, 3) if _number(a) and _number(b) and b else None


def report(parts):
    """The published verification (the fact checkpoint_io_verify and the controller's JSON).

    ``parts``: node, directories, ranks, before (before_side), after_settings (aio_settings), after (the repeated
    write: runs, throughput_gib_s, p99_ns, last), block_now (queue_settings), same_settings, verdict (before_after),
    ceiling_bytes, min_fraction, findings, settings_before_source, engine (verify_engine: what wrote the
    checkpoints).
    """
    after, before, verdict = parts['after'], parts['before'], parts['verdict']
    last = after.get('last') or {}
    ceiling = round(parts['ceiling_bytes'] / float(GIB), 3) if _number(parts.get('ceiling_bytes')) else None
    after_bw = (after.get('throughput_gib_s') or {}).get('median')
    before_p99 = (before.get('p99_ns') or {}).get('median')
    after_p99 = (after.get('p99_ns') or {}).get('median')
    return {
        'node': parts['node'],
        'directories': list(parts['directories']),
        'devices': last.get('devices') or [],
        'ranks': int(parts['ranks']),
        'total_gib': last.get('total_gib'),
        'repeats': len(after.get('runs') or []),
        'before': before,
        'after': {'settings': parts['after_settings'], 'runs': after.get('runs'),
                  'throughput_gib_s': after.get('throughput_gib_s'), 'p99_ns': after.get('p99_ns'),
                  'total_bytes': last.get('total_bytes'), 'iodepth_max_achieved': last.get('iodepth_max_achieved'),
                  'block': parts['block_now']},
        'same_settings': bool(parts['same_settings']),
        'verdict': verdict.get('verdict'),
        'ratio': verdict.get('ratio'),
        'ratio_low': verdict.get('ratio_low'),
        'ratio_high': verdict.get('ratio_high'),
        'noise': verdict.get('noise'),
        'p99_ratio': _ratio(after_p99, before_p99),
        'ceiling_gib_s': ceiling,
        'after_ceiling': _ratio(after_bw, ceiling),
        'min_fraction': float(parts['min_fraction']),
        'restore': restore_side(before, after),
        'findings': parts.get('findings') or [],
        'settings_before_source': parts.get('settings_before_source'),
        'engine': parts.get('engine') or {'engine': 'fio', 'reason': 'fio'},
    }


def restore_side(before, after):
    """The restore reads (each write read back, the slowest rank's time to its last byte, MLPerf Storage's
    recovery): {before, after: {median, min, max, n, spread} or None where none was read (a baseline recorded before
    restore reads were measured, or checkpoint_io_verify_restore false), ratio: after/before medians or None}."""
    sides = dict((name, side.get('restore_gib_s') or None) for name, side in (('before', before), ('after', after)))
    sides['ratio'] = _ratio((sides['after'] or {}).get('median'), (sides['before'] or {}).get('median'))
    return sides


def _restore_text(restore):
    sides = ['%s %s' % (name, _gib(restore[name]) if restore.get(name) else 'not measured')
             for name in ('before', 'after')]
    return 'restore read %s%s' % (', '.join(sides), ', after/before %s' % restore['ratio']
                                  if restore.get('ratio') is not None else '')


def _fmt(value):
    """A number as Jinja prints it after round(): 0.5, 12.0, 3."""
    return repr(value) if isinstance(value, float) else str(value)


def _gib(side):
    return '%s GiB/s (median of %s, %s..%s, spread %s%%)' % (
        _fmt(round(side['median'], 3)), side['n'], _fmt(round(side['min'], 3)), _fmt(round(side['max'], 3)),
        _fmt(round(side['spread'] * 100, 1)))


def _ms(side):
    return ('%s ms' % _fmt(round(side['median'] / 1000000.0, 1))) if side else 'not reported'


def _settings(settings):
    text = 'queue_depth %s, block_size %s' % (settings.get('queue_depth'), settings.get('block_size'))
    if settings.get('thermal_note'):
        text += '; thermal back-off: %s' % settings['thermal_note']
    return text


def report_line(v):
    """One line of a report: each side the median of its runs with their range and spread, p99 beside it, what
    "before" was, "no change" instead of a ratio when both sides used the same settings, and after/ceiling."""
    before, after = v['before'], v['after']
    ranks = int(v['ranks'])
    engine = v.get('engine') or {}
    written_by = (", written by DeepSpeed %s's FastPersist writer" % engine.get('deepspeed_version')
                  if engine.get('engine') == 'deepspeed' else '')
    parts = [
        '%s: %s GiB in %d %s%s' % (v['node'], _fmt(round(v['total_gib'], 3)), ranks, 'rank' if ranks == 1 else 'ranks',
                                   written_by),
        'before %s, p99 %s (%s; %s)' % (_gib(before['throughput_gib_s']), _ms(before.get('p99_ns')),
                                        _settings(before['settings']), before['what']),
        'after %s, p99 %s (%s)' % (_gib(after['throughput_gib_s']), _ms(after.get('p99_ns')),
                                   _settings(after['settings'])),
    ]
    if v['verdict'] == 'no change':
        parts.append('no change (the same settings before and after)')
    else:
        parts.append("%s: after/before %s (%s..%s from the runs' extremes, noise %s%%), p99 after/before %s" % (
            v['verdict'], v['ratio'], v['ratio_low'], v['ratio_high'], _fmt(round(v['noise'] * 100, 1)),
            v['p99_ratio'] if v.get('p99_ratio') is not None else 'not reported'))
    if v.get('ceiling_gib_s') is not None:
        parts.append("ceiling %s GiB/s (the depth sweep's best), after/ceiling %s"
                     % (v['ceiling_gib_s'], v['after_ceiling']))
    else:
        parts.append('ceiling not measured')
    restore = v.get('restore') or {}
    if restore.get('before') or restore.get('after'):
        parts.append(_restore_text(restore))
    return '; '.join(parts)


def drive_ids(facts, names):
    """The identities of the NVMe namespaces ``names`` (kernel names) as a baseline records them: the WWID, else
    ``SERIAL/NSID``; sorted, each once (kernel names change between boots, these do not)."""
    by_name = dict((ident['name'], ident) for ident in node_identities(section(facts, 'nvme')))
    out = []
    for name in names or []:
        ident = by_name.get(name)
        if not ident:
            continue
        key = ident.get('wwid') or ('%s/%s' % (ident.get('serial'), ident.get('nsid')) if ident.get('serial') else None)
        if key and key not in out:
            out.append(key)
    return sorted(out)


def baseline_target(directories, selected, signed, force):
    """Where the checkpoint before tuning is written: {where: directory|drives|none, target, reason, expect}.

    ``directories``: the checkpoint directories found (they exist); ``selected``: the data drives the xfs role is to
    format (select_drives()['selected'], [] when it is not to build the volume); ``signed``: the kernel names of
    those that carry a signature (wipefs); ``force``: xfs_force. A directory as found is written. Else the drives
    are written raw only when every one is blank (no signature) and named in the force list (by serial, SERIAL/NSID
    or WWID): a raw write destroys what a drive holds, signature or not (plain dm-crypt, an application's raw data,
    an array member whose superblock was zeroed). Else nothing is measured, and the reason says how to get it."""
    directories = list(directories or [])
    if directories:
        return {'where': 'directory', 'target': directories, 'expect': [],
                'reason': 'the checkpoint directory as found (%s)' % ', '.join(directories)}
    drives = [d for d in selected or [] if isinstance(d, dict) and d.get('name')]
    none = {'where': 'none', 'target': [], 'expect': []}
    if not drives:
        return dict(none, reason='no checkpoint directory found and no blank data drives the xfs role is to format')
    if signed:
        return dict(none, reason='data drives carry signatures (%s): not written raw' % ', '.join(signed))
    names = force_names(force, 'xfs_force')
    unforced = [d for d in drives if not named_by(d, names)]
    if unforced:
        return dict(none, reason='the data drives the xfs role is to format are written raw only where xfs_force '
                    'names them (not named: %s): the write destroys what they hold. Name them (xfs_force: [%s]) to '
                    'measure the checkpoint write before tuning on them, or set checkpoint_io_verify_dirs'
                    % (', '.join('%s (%s)' % (d.get('serial') or d.get('wwid'), d['name']) for d in unforced),
                       ', '.join(str(d.get('serial') or d.get('wwid')) for d in drives)))
    return {'where': 'drives', 'target': [d['name'] for d in drives],
            'expect': [dict((k, d[k]) for k in ('name', 'serial', 'wwid', 'size_bytes') if d.get(k) is not None)
                       for d in drives],
            'reason': 'the blank data drives written raw (%s, named in xfs_force) before the xfs role formatted them'
                      % ', '.join(d['name'] for d in drives)}


def parse_df(output):
    """``df --output=source,target,avail -B1 DIR...``: [{source, target, avail}] in the order of the directories."""
    rows = []
    for line in (output or '').splitlines()[1:]:
        parts = line.split()
        if len(parts) < 3 or not parts[-1].isdigit():
            continue
        rows.append({'source': parts[0], 'target': ' '.join(parts[1:-1]), 'avail': int(parts[-1])})
    return rows


def write_places(df_output, dirs, facts=None):
    """The directories a verification writes to, checked: {avail (bytes free where the first one is), errors}.
    A directory on the OS drive (its filesystem mounted at ``/``, ``/boot``, ``/usr``, ``/var``..., or on an NVMe
    namespace the facts call the OS drive) is refused: the verification writes GiBs and compares them with the
    data drives' baseline."""
    rows = parse_df(df_output)
    if len(rows) != len(dirs or []):
        raise ValueError('df printed %d filesystems for %d directories: %r' % (len(rows), len(dirs or []), df_output))
    os_devices = set('/dev/%s' % ns.get('name') for ns in section(facts or {}, 'nvme').get('namespaces') or []
                     if isinstance(ns, dict) and ns.get('is_os_drive'))
    errors = []
    for path, row in zip(dirs, rows):
        on_os_nvme = any(row['source'] == dev or row['source'].startswith(dev + 'p') for dev in os_devices)
        on_os = row['target'] in OS_MOUNT_POINTS or on_os_nvme
        if on_os:
            errors.append('%s is on the OS drive (%s mounted at %s): the verification writes a checkpoint of GiBs and '
                          'never on the OS drive; point checkpoint_io_verify_dirs at the checkpoint volume'
                          % (path, row['source'], row['target']))
    return {'avail': rows[0]['avail'] if rows else 0, 'errors': errors}


def before_plan(baseline, drives_now, avail, ranks, full_size, share, asked=False):
    """What the verification compares with, and the checkpoint's shape: {shape, baseline, reason}.

    The recorded baseline is used only like with like: measured on the same drives (``drives_now``: drive_ids of
    the drives behind the verification's directories), with the same ranks, a size the user asked for kept (never
    swapped for the baseline's), and fitting in ``share`` of the space. Otherwise ``baseline`` becomes
    ``{where: none, reason}`` saying why, and the verification replays the settings found before tuning on its own
    directories, at its own shape."""
    shape = checkpoint_shape(avail, ranks, full_size, share, asked)
    if not baseline or baseline.get('where', 'none') == 'none':
        return {'shape': shape, 'baseline': baseline or {'where': 'none', 'reason': 'no baseline recorded on this node'},
                'reason': None}
    problems = []
    ids = baseline.get('drive_ids')
    if not ids:
        problems.append('it does not say which drives it ran on')
    elif sorted(ids) != sorted(drives_now or []):
        problems.append('it ran on %s, this write goes to %s' % (', '.join(ids), ', '.join(drives_now or []) or
                                                                 'no NVMe drive the facts know'))
    if int(baseline.get('ranks') or 0) != int(ranks):
        problems.append('it wrote %s ranks, checkpoint_io_verify_ranks is %s' % (baseline.get('ranks'), ranks))
    total = int(baseline.get('total_bytes') or 0)
    if asked and total != int(full_size):
        problems.append('it wrote %d bytes, checkpoint_io_verify_total_size asks %d' % (total, int(full_size)))
    if total > int(avail) * float(share):
        problems.append('its %d bytes do not fit in %s of the %d bytes free here' % (total, share, int(avail)))
    if problems:
        reason = 'the recorded baseline (%s, measured %s) is not like this write: %s; the settings found before ' \
                 'tuning are replayed here instead' % (baseline.get('reason'), baseline.get('measured_at'),
                                                       '; '.join(problems))
        return {'shape': shape, 'baseline': {'where': 'none', 'reason': reason}, 'reason': reason}
    return {'shape': {'ranks': int(baseline['ranks']), 'total_bytes': total}, 'baseline': baseline, 'reason': None}
