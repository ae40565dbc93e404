# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DeepSpeed's checkpoint writer (FastPersist): the ``checkpoint.writer`` section of a ds_config.

Read from DeepSpeed 0.19.8 (runtime/model_checkpointing/constants.py, config.py, writer_factory.py,
data_parallel_writer_factory.py; io/fast_file_writer.py, double_io_buffer.py; ops/csrc/aio):

* a ``checkpoint.writer`` object selects the FastCheckpointEngine (DeepSpeed 0.17.1 and later); its keys, with
  DeepSpeed's defaults, are :data:`WRITER_DEFAULTS`; ``type`` and ``data_parallel`` are upper-cased and checked
  against their choices, the others are taken as they are (``dict.get``: a string ``"false"`` is truthy);
* the writer pins ONE buffer of ``io_buffer_size`` bytes per writing process; ``io_buffer_double`` splits it in
  two halves, one filled while the other drains; a drain writes its bytes through the aio handle in ``block_size``
  requests, each of the ``intra_op_parallelism`` threads its part; the buffer's size must be a multiple of the
  handle's alignment (``intra_op_parallelism x 512``; twice that when double);
* a save writes a new file with O_DIRECT, so every request extends it, and a direct write that starts beyond the
  file's size waits for all direct I/O in flight (XFS's write checks drain it; ext4 writes an extending request
  synchronously): ``queue_depth`` never applies, one request per thread is in flight, and the bytes in flight are
  the request's. Measured on a lab node (knee16 drives, XFS): fio with 1 MiB requests at depth 32 on a growing
  file wrote 6.1 MiB/s, on a file sized first 57 MiB/s; DeepSpeed's own save 6.0 MiB/s with 1 MiB requests, 93-99
  MiB/s with 128 MiB requests (docs/deepspeed-fastpersist.md). :func:`request_size` sizes the request from the
  sweep's latency and ceiling;
* ``data_parallel`` says which ranks write: none - the job's data-parallel rank 0 alone; ``REPLICA`` - every
  data-parallel rank writes its share; ``SOCKET`` - one rank per socket (DeepSpeed counts two sockets per machine);
  ``MACHINE`` - one rank per machine.

:func:`writer_plan` decides the section for a node (each key with its reason); :func:`merge_writer`,
:func:`writer_record_fields` and :func:`restore_writer` are the deepspeed_aio module's merge and revert of it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size, to_bool, to_int

CHECKPOINT = 'checkpoint'
WRITER = 'writer'
MIB = 1024 * 1024
FASTPERSIST_SINCE = (0, 17, 1)
TYPES = ('FAST', 'PYTHON', 'MOCK')
UNITS = ('REPLICA', 'SOCKET', 'MACHINE')
SOCKETS_PER_MACHINE = 2  # DeepSpeed's own assumption (model_checkpointing/utils.py)
O_DIRECT_ALIGNMENT = 512  # ops/csrc/aio/py_lib/deepspeed_py_io_handle.cpp
WRITER_DEFAULTS = (
    ('type', 'FAST'),
    ('io_buffer_size', 64 * MIB),
    ('io_buffer_double', True),
    ('show_statistics', False),
    ('data_parallel', None),
    ('decoupled', False),
    ('io_multiplier', 1),
)
WRITER_KEYS = tuple(pair[0] for pair in WRITER_DEFAULTS)
BOOL_KEYS = ('io_buffer_double', 'show_statistics', 'decoupled')
BUFFER_MAX = 2 ** 40
MEMLOCK_MAX = 2 ** 60
MULTIPLIER_MAX = 64
# The share of the volume's ceiling one request of a save is sized to reach: a request of B bytes on a volume of
# ceiling C and request latency L moves B / (L + B / C), so B = share / (1 - share) x C x L (9 x C x L).
REQUEST_SHARE = 0.9
BLOCK_MAX = 1 << 30  # the largest power of two in DeepSpeed's C int block_size
DEFAULT_HALF = 32 * MIB  # one half of DeepSpeed's default 64 MiB double buffer


def parse_version(text):
    """'0.19.8' (or '0.17.1+cu121', '0.18.0rc1') -> (0, 19, 8); None when it is no version."""
    match = re.match(r'^\s*(\d+)\.(\d+)(?:\.(\d+))?', text) if isinstance(text, str) else None
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


def has_fastpersist(version):
    """True / False by DeepSpeed's version string; None when unknown."""
    parsed = parse_version(version)
    return None if parsed is None else parsed >= FASTPERSIST_SINCE


def _int(value, name, low, high):
    """units.to_int within [low..high], or ValueError naming the value and the limit."""
    try:
        number = to_int(value, name)
    except ValueError:
        raise ValueError('%s: %r is not a whole number' % (name, value))
    if not low <= number <= high:
        raise ValueError('%s: %d is out of range [%d..%d]' % (name, number, low, high))
    return number


def normalize_writer_values(values):
    """The writer keys given, with real JSON types, or ValueError naming the key, the value and the limit."""
    if not isinstance(values, dict):
        raise ValueError('writer: expected a mapping of checkpoint.writer keys, got %s' % type(values).__name__)
    out = {}
    for key, value in values.items():
        name = 'writer.%s' % key
        if key not in WRITER_KEYS:
            raise ValueError('%s is not a DeepSpeed checkpoint.writer key (%s)' % (name, ', '.join(WRITER_KEYS)))
        if value is None:
            if key != 'data_parallel':
                raise ValueError('%s: null is not allowed (only data_parallel may be null)' % name)
            out[key] = None
        elif key in BOOL_KEYS:
            out[key] = to_bool(value, name)
        elif key == 'io_buffer_size':
            size = _int(value, name, O_DIRECT_ALIGNMENT * 2, BUFFER_MAX)
            if size % (O_DIRECT_ALIGNMENT * 2):
                raise ValueError('%s: %d is not a multiple of %d (the aio handle\'s alignment, twice for a double '
                                 'buffer)' % (name, size, O_DIRECT_ALIGNMENT * 2))
            out[key] = size
        elif key == 'io_multiplier':
            out[key] = _int(value, name, 1, MULTIPLIER_MAX)
        else:
            choices = TYPES if key == 'type' else UNITS
            if not isinstance(value, str) or value.upper() not in choices:
                raise ValueError('%s: %r is not one of %s' % (name, value, ', '.join(choices)))
            out[key] = value.upper()
    return out


def writer_section(config):
    """The ``checkpoint.writer`` object of a parsed ds_config, None when absent; ValueError when a level on the way
    is not an object."""
    if not isinstance(config, dict):
        raise ValueError('the top level must be a JSON object, got %s' % type(config).__name__)
    checkpoint = config.get(CHECKPOINT)
    if checkpoint is None:
        return None
    if not isinstance(checkpoint, dict):
        raise ValueError('checkpoint must be a JSON object, got %s' % type(checkpoint).__name__)
    writer = checkpoint.get(WRITER)
    if writer is not None and not isinstance(writer, dict):
        raise ValueError('checkpoint.writer must be a JSON object, got %s' % type(writer).__name__)
    return writer


def effective_writer(section):
    """What DeepSpeed's get_checkpoint_writer_config makes of ``section``: None (no FastPersist: torch.save) when
    absent, else every key with DeepSpeed's defaults and the upper-cased choices; plus the warnings (string
    booleans, which DeepSpeed takes as truthy, and values it would refuse)."""
    if section is None:
        return {'writer': None, 'warnings': []}
    out, warnings = {}, []
    for key, default in WRITER_DEFAULTS:
        value = section.get(key, default)
        if key in ('type', 'data_parallel') and isinstance(value, str):
            value = value.upper()
            choices = TYPES if key == 'type' else UNITS
            if value not in choices:
                warnings.append('checkpoint.writer.%s %r is not one of %s: DeepSpeed refuses the config'
                                % (key, section.get(key), ', '.join(choices)))
        if key in BOOL_KEYS and isinstance(value, str):
            warnings.append('checkpoint.writer.%s is the string %r, which DeepSpeed takes as %s'
                            % (key, value, bool(value)))
        out[key] = value
    for key in section:
        if key not in WRITER_KEYS:
            warnings.append('checkpoint.writer.%s is not read by DeepSpeed 0.19.8' % key)
    return {'writer': out, 'warnings': warnings}


def merge_writer(config, desired):
    """``config`` with the ``desired`` writer keys set in ``checkpoint.writer`` (made where missing, at the end);
    every other key, nested ones too, kept in order. Returns (new_config, changed_keys, removed_keys); ``config``
    is never mutated. An empty ``desired`` changes nothing."""
    wanted = normalize_writer_values(desired or {})
    old = writer_section(config)
    new_config = copy.deepcopy(config)
    if not wanted:
        return new_config, [], []
    section = copy.deepcopy(old) if old is not None else {}
    section.update(wanted)
    changed = [key for key in section if old is None or key not in old or old[key] != section[key]
               or type(old[key]) is not type(section[key])]
    if changed:
        checkpoint = new_config.get(CHECKPOINT)
        if checkpoint is None:
            checkpoint = new_config[CHECKPOINT] = {}
        checkpoint[WRITER] = section
    return new_config, ['writer.%s' % key for key in changed], []


def writer_record_fields(config):
    """What a record entry keeps of a file before the writer's first change: whether ``checkpoint`` and its
    ``writer`` were there, and the writer section found."""
    config = config if isinstance(config, dict) else {}
    checkpoint = config.get(CHECKPOINT)
    present = isinstance(checkpoint, dict) and WRITER in checkpoint
    return {'checkpoint_present': CHECKPOINT in config, 'writer_present': present,
            'writer': copy.deepcopy(checkpoint[WRITER]) if present else None}


def restore_writer(config, entry):
    """``config`` with the writer section of a record ``entry`` put back (removed when there was none, and
    ``checkpoint`` with it when the module made it and nothing else is in it); other keys as they are now. An
    entry recorded without the writer fields leaves the writer alone."""
    new_config = copy.deepcopy(config if isinstance(config, dict) else {})
    if 'writer_present' not in (entry or {}):
        return new_config
    checkpoint = new_config.get(CHECKPOINT)
    if entry['writer_present']:
        if not isinstance(checkpoint, dict):
            checkpoint = new_config[CHECKPOINT] = {}
        checkpoint[WRITER] = copy.deepcopy(entry.get('writer'))
    elif isinstance(checkpoint, dict):
        checkpoint.pop(WRITER, None)
        if not checkpoint and not entry.get('checkpoint_present', True):
            del new_config[CHECKPOINT]
    return new_config


def _ceil(value, unit):
    return -(-value // unit) * unit


def _size(value):
    return '%d MiB' % (value // MIB) if value % MIB == 0 else '%d B' % value


def buffer_need(aio, double):
    """Bytes one drain of the writer's buffer needs to keep a full request in flight per thread (a save's file
    grows, so the depth never applies: one request per thread), and the buffer's unit (its size must be a multiple
    of it): ``intra_op_parallelism x block_size`` per drain, two drains when double."""
    halves = 2 if double else 1
    drain = int(aio.get('intra_op_parallelism') or 1) * int(aio['block_size'])
    return {'drain_bytes': drain, 'need_bytes': halves * drain, 'unit_bytes': halves * drain}


def sweep_physics(sweep):
    """(request latency in seconds, ceiling in bytes per second) of a depth sweep's result or record: the
    depth-1 point's mean latency and the knee's best bandwidth; None when the sweep has not both."""
    sweep = sweep if isinstance(sweep, dict) else {}
    first = next((p for p in sweep.get('curve') or [] if isinstance(p, dict) and p.get('depth') == 1), {})
    latency, ceiling = first.get('mean_ns'), (sweep.get('knee') or {}).get('best_bw_bytes')
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in (latency, ceiling)):
        return None
    return latency / 1e9, float(ceiling)


def request_size(block, threads, writers, physics, budget=None, halves=2):
    """(aio block_size for FastPersist's saves, reason): the smallest power-of-two multiple of ``block`` whose one
    request per thread reaches :data:`REQUEST_SHARE` of this writer's share of the ceiling (``physics``: the
    sweep's latency and ceiling, :func:`sweep_physics`), at most :data:`BLOCK_MAX` and halved to fit ``budget``
    (the locked memory: ``halves`` drains of ``threads`` requests); without a sweep one request fills a half of
    DeepSpeed's default buffer."""
    block, threads = int(block), max(1, int(threads))
    if physics is None:
        size = max(block, DEFAULT_HALF // threads // block * block)
        why = ('no depth sweep measured this volume\'s latency and ceiling here; a save grows its file, so one '
               'request per thread is in flight: one request fills a half of DeepSpeed\'s default 64 MiB buffer, '
               '%s' % _size(size))
    else:
        latency, ceiling = physics
        want = REQUEST_SHARE / (1 - REQUEST_SHARE) * ceiling / max(1, int(writers)) / threads * latency
        size = block
        while size < want and size * 2 <= BLOCK_MAX:
            size *= 2
        why = ('a save grows its file, so one request per thread is in flight (the depth never applies); a '
               'request of B bytes moves B / (latency + B / ceiling), and %.0f%% of this writer\'s share of the '
               'ceiling (%s/s over %d writer(s), %d thread(s)) at the sweep\'s request latency %.1f ms needs %s: %s'
               % (REQUEST_SHARE * 100, _size(int(ceiling) // MIB * MIB), max(1, int(writers)), threads,
                  latency * 1000, _size(_ceil(int(want), MIB)), _size(size)))
    if budget is not None and halves * threads * size > budget:
        fit = size
        while fit > block and halves * threads * fit > budget:
            fit //= 2
        if fit < size:
            why += '; lowered to %s, %d drain(s) within %s' % (_size(fit), halves, _size(budget))
            size = fit
    return size, why


def _data_parallel(asked, ranks, numa_nodes):
    """(value, writers per node, reason)."""
    if asked != 'auto':
        value = None if asked is None else str(asked).upper()
        writers = {'REPLICA': ranks, 'SOCKET': min(ranks, SOCKETS_PER_MACHINE), 'MACHINE': 1}.get(value, 1)
        return value, writers, 'asked: %s' % (value or 'null (the job\'s data-parallel rank 0 writes alone)')
    known = sorted(set(node for node in numa_nodes if isinstance(node, int)))
    if ranks == 1:
        return 'MACHINE', 1, ('one rank per node: it writes its node\'s share (without data_parallel the job\'s '
                              'rank 0 writes the whole checkpoint alone)')
    if len(known) >= 2:
        return 'SOCKET', SOCKETS_PER_MACHINE, (
            'the data drives sit behind %d NUMA nodes (%s): one writer per socket, near its drives, instead of %d '
            'ranks crossing the socket link (DeepSpeed counts %d sockets per machine)'
            % (len(known), ', '.join(str(node) for node in known), ranks, SOCKETS_PER_MACHINE))
    if len(known) == 1 and None not in numa_nodes:
        return 'REPLICA', ranks, (
            'the data drives all sit behind NUMA node %d: every rank writes its share, %d writers as the depth was '
            'planned for (per-socket writers would leave the queue short)' % (known[0], ranks))
    return 'REPLICA', ranks, ('the data drives\' NUMA nodes are not known (no numa_node in sysfs: a VM or a fabric '
                              'drive): every rank writes its share, %d writers as the depth was planned for' % ranks)


def writer_plan(options, aio, ranks, numa_nodes, deepspeed_version=None, memlock_bytes=None):
    """The ``checkpoint.writer`` section for a node, or why it is left alone.

    ``options``: {manage: auto | true | false, io_buffer_size: auto | bytes, io_buffer_double: bool,
    data_parallel: auto | REPLICA | SOCKET | MACHINE | None, block_size: aio | auto | size (aio: the aio section's
    block size stays and the request size is said; auto: :func:`request_size` is written), sweep: the depth
    sweep's result or record (None: no sweep)}; ``aio``: the aio values the role settled (block_size,
    queue_depth, intra_op_parallelism); ``ranks`` per node; ``numa_nodes`` of the data drives' controllers (None
    where sysfs has none); ``deepspeed_version`` of the training environment (None: not known);
    ``memlock_bytes``: the locked memory one training process may pin ('unlimited' or None: no bound known).

    Returns {manage, reason, section (None when not managed), reasons {key: why}, block_size and queue_depth (the
    aio values the role writes where the section is managed: the same bytes in flight in requests of the save's
    size), block_size_reason, queue_depth_reason, writers_per_node,
    pinned_bytes_per_writer, in_flight_per_node (bytes), notes [...], errors [...]}.
    """
    manage = str(options.get('manage', 'auto')).lower()
    fast = has_fastpersist(deepspeed_version)
    plan = {'manage': False, 'reason': None, 'section': None, 'reasons': {}, 'writers_per_node': None,
            'block_size': None, 'block_size_reason': None, 'queue_depth': None, 'queue_depth_reason': None,
            'request_size': None,
            'pinned_bytes_per_writer': None, 'in_flight_per_node': None, 'notes': [], 'errors': [],
            'deepspeed_version': deepspeed_version}
    if manage == 'leave':
        plan['reason'] = 'not managed, as asked (leave): the section is left as it is'
        return plan
    if manage == 'auto' and not fast:
        plan['reason'] = ('not managed: the training environment\'s DeepSpeed %s (FastPersist, the checkpoint.writer '
                          'section, needs %s or later; the section is left as it is)'
                          % ('is ' + deepspeed_version if deepspeed_version else 'was not found',
                             '.'.join(str(part) for part in FASTPERSIST_SINCE)))
        return plan
    plan['manage'] = True
    plan['reason'] = ('managed: DeepSpeed %s has FastPersist' % deepspeed_version if fast
                      else 'managed as asked (manage); the training environment\'s DeepSpeed is %s'
                      % (deepspeed_version or 'not known'))
    double = bool(options.get('io_buffer_double', True))
    asked = options.get('io_buffer_size', 'auto')
    budget = memlock_bytes if isinstance(memlock_bytes, int) and not isinstance(memlock_bytes, bool) else None
    reasons = {'type': 'the aio handle drains pinned buffers (FastFileWriter)'}
    unit, writers, why = _data_parallel(options.get('data_parallel', 'auto'), int(ranks), list(numa_nodes or []))
    threads = int(aio.get('intra_op_parallelism') or 1)
    block = options.get('block_size', 'aio')
    if block in ('auto', 'aio') or block is None:
        bound = budget  # an asked buffer bounds the request as the locked memory does
        if asked not in ('auto', None):
            try:
                bound = normalize_writer_values({'io_buffer_size': asked})['io_buffer_size']
            except ValueError:
                pass  # refused below with its message
        request, block_why = request_size(aio['block_size'], threads, writers, sweep_physics(options.get('sweep')),
                                          bound, 2 if double else 1)
        plan['request_size'] = request
        if block == 'auto':
            block = request
        else:  # aio: the aio section's own block size and depth, the request size said, not written
            block = int(aio['block_size'])
            block_why = ('the aio section\'s (deepspeed_config_writer_block_size aio); a save would reach 90%% of '
                         'the ceiling with requests of %s (auto writes them): %s' % (_size(request), block_why))
            plan['notes'].append('a save goes one request at a time: with %s requests it would reach 90%% of the '
                                 'ceiling, with %s it moves less (deepspeed_config_writer_block_size auto writes '
                                 'the larger)' % (_size(request), _size(block)) if request > block else
                                 'a save goes one request at a time; %s requests reach 90%% of the ceiling'
                                 % _size(block))
    else:
        block = parse_size(block, 'deepspeed_config_writer_block_size')
        if block % 4096 or not 4096 <= block <= BLOCK_MAX:
            raise ValueError('deepspeed_config_writer_block_size: %d is not a multiple of 4096 from 4096 to %d'
                             % (block, BLOCK_MAX))
        block_why = 'asked (deepspeed_config_writer_block_size)'
    plan['block_size'], plan['block_size_reason'] = block, block_why
    # reads and preallocated writes (a restore, ZeRO's swap) do queue: the same bytes in flight as planned, now in
    # requests of the save's size
    queue = max(1, -(-int(aio['queue_depth']) * int(aio['block_size']) // block))  # aio: the depth as it is
    plan['queue_depth'] = queue
    plan['queue_depth_reason'] = ('%d: the planned depth %d x block %s in flight, in requests of %s (the restore '
                                  'read queues them; a save does not)' % (queue, int(aio['queue_depth']),
                                                                          _size(int(aio['block_size'])), _size(block)))
    aio = dict(aio, block_size=block, queue_depth=queue)
    need = buffer_need(aio, double)
    if asked == 'auto' or asked is None:
        size = _ceil(max(64 * MIB, need['need_bytes']), need['unit_bytes'])
        why_size = ('%s, the larger of DeepSpeed\'s 64 MiB and %s of one %s request per thread (%d thread(s))'
                    % (_size(size), 'two drains' if double else 'one drain', _size(block), threads))
        if budget is not None and size > budget:
            if need['need_bytes'] <= budget:
                size = need['need_bytes']
                why_size += '; lowered to %s, %s, within the training user\'s locked-memory limit %s' % (
                    _size(size), 'two drains' if double else 'one drain', _size(budget))
            elif double and need['drain_bytes'] <= budget:
                double, size = False, _ceil(need['drain_bytes'], need['unit_bytes'] // 2)
                why_size += ('; one buffer of %s (no double buffer): the training user\'s locked-memory limit %s '
                             'holds one drain, not two' % (_size(size), _size(budget)))
                reasons['io_buffer_double'] = ('the locked-memory limit %s holds one drain (%s), not two'
                                               % (_size(budget), _size(need['drain_bytes'])))
            else:
                plan['errors'].append(
                    'the training user\'s locked-memory limit %s is below one drain %s (%d thread(s) x block %s): '
                    'FastPersist\'s buffer cannot be pinned. Raise the limit (io_uring_engine_memlock) or lower '
                    'the block size' % (_size(budget), _size(need['drain_bytes']), threads, _size(block)))
        reasons['io_buffer_size'] = why_size
    else:
        try:
            size = normalize_writer_values({'io_buffer_size': asked})['io_buffer_size']
        except ValueError as exc:
            plan['errors'].append(str(exc).replace('writer.io_buffer_size', 'deepspeed_config_writer_io_buffer_size'))
            size = None
        if size is not None:
            reasons['io_buffer_size'] = '%s, asked' % _size(size)
            if size < need['need_bytes']:
                plan['notes'].append(
                    'deepspeed_config_writer_io_buffer_size %s is below %s (%s of %s): a drain cannot hold one '
                    'request per thread' % (_size(size), _size(need['need_bytes']),
                                            'two drains' if double else 'one drain', _size(need['drain_bytes'])))
            if size % need['unit_bytes']:
                plan['errors'].append('deepspeed_config_writer_io_buffer_size: %d is not a multiple of %d (%s x '
                                      'intra_op_parallelism x block size)' % (size, need['unit_bytes'],
                                                                              '2' if double else '1'))
            if budget is not None and size > budget:
                plan['errors'].append('deepspeed_config_writer_io_buffer_size: %s is above the training user\'s '
                                      'locked-memory limit %s' % (_size(size), _size(budget)))
    reasons.setdefault('io_buffer_double', 'one half fills while the other drains' if double else 'asked')
    if budget is None:
        known = 'unlimited' if memlock_bytes == 'unlimited' else 'io_uring_engine did not run'
        plan['notes'].append('the training user\'s locked-memory limit is not known here (%s): the buffer is not '
                             'checked against it' % known)
    reasons['data_parallel'] = why
    plan['writers_per_node'] = writers
    if size is not None:
        plan['pinned_bytes_per_writer'] = size
    plan['in_flight_per_node'] = writers * threads * block
    if writers < int(ranks):
        plan['notes'].append('%d writer(s) per node of %d ranks: %s in flight (one %s request per thread each)'
                             % (writers, int(ranks), _size(writers * threads * block), _size(block)))
    plan['section'] = {'type': 'FAST', 'io_buffer_size': size, 'io_buffer_double': double, 'data_parallel': unit}
    plan['reasons'] = reasons
    return plan


def plan_lines(plan):
    """The plan in words, one line each: why it is (not) managed, each key = value: its reason, the notes."""
    lines = [plan['reason']]
    if plan.get('section'):
        lines.append('aio.block_size = %s: %s' % (plan.get('block_size'), plan.get('block_size_reason')))
        lines.append('aio.queue_depth = %s' % plan.get('queue_depth_reason'))
    for key, value in (plan.get('section') or {}).items():
        reason = (plan.get('reasons') or {}).get(key)
        lines.append('%s = %s%s' % (key, value, (': ' + reason) if reason else ''))
    return lines + list(plan.get('notes') or []) + list(plan.get('errors') or [])


def drive_numa_nodes(facts, names):
    """The NUMA node of each named namespace's first controller (nvme facts; None where sysfs gives none). A name
    that is an md array (the checkpoint volume) stands for its members (xfs facts)."""
    nvme = (facts or {}).get('nvme') or {}
    controllers = dict((c.get('name'), c) for c in nvme.get('controllers') or [] if isinstance(c, dict))
    namespaces = dict((n.get('name'), n) for n in nvme.get('namespaces') or [] if isinstance(n, dict))
    members = {}
    for fs in ((facts or {}).get('xfs') or {}).get('filesystems') or []:
        md = fs.get('md') if isinstance(fs, dict) else None
        if isinstance(md, dict) and fs.get('kernel_name'):
            members[fs['kernel_name']] = md.get('members') or []
    out = []
    for name in names or []:
        for member in members.get(name) or [name]:
            ns = namespaces.get(member) or {}
            ctrl = controllers.get((ns.get('controllers') or [None])[0]) or {}
            out.append(ctrl.get('numa_node'))
    return out


ROLE_CHOICES = (
    ('deepspeed_config_writer', ('auto', 'manage', 'leave')),
    ('deepspeed_config_writer_data_parallel', ('auto',) + UNITS),
)


def role_input_errors(values):
    """The deepspeed_config role's writer values out of their limits, one message each (the variable, the value,
    the limit); a variable not given is not checked."""
    errors = []
    for name, choices in ROLE_CHOICES:
        if name in values and str(values[name]).upper() not in [choice.upper() for choice in choices]:
            errors.append('%s: %r is not one of %s' % (name, values[name], ', '.join(choices)))
    name = 'deepspeed_config_writer_io_buffer_size'
    if name in values and values[name] != 'auto':
        try:
            size = parse_size(values[name], name)
            if not O_DIRECT_ALIGNMENT * 2 <= size <= BUFFER_MAX or size % (O_DIRECT_ALIGNMENT * 2):
                errors.append('%s: %r (%d bytes) is not auto or a multiple of %d from %d to %d bytes'
                              % (name, values[name], size, O_DIRECT_ALIGNMENT * 2, O_DIRECT_ALIGNMENT * 2, BUFFER_MAX))
        except ValueError as exc:
            errors.append(str(exc))
    name = 'deepspeed_config_writer_block_size'
    if name in values and values[name] not in ('auto', 'aio'):
        try:
            size = parse_size(values[name], name)
            if not 4096 <= size <= BLOCK_MAX or size % 4096:
                errors.append('%s: %r (%d bytes) is not aio, auto or a multiple of 4096 from 4096 to %d bytes'
                              % (name, values[name], size, BLOCK_MAX))
        except ValueError as exc:
            errors.append(str(exc))
    name = 'deepspeed_config_writer_memlock'
    if name in values and values[name] not in ('auto', 'unlimited', None):
        try:
            if parse_size(values[name], name) > MEMLOCK_MAX:
                errors.append('%s: %r is above the limit %d bytes (or auto, unlimited)' % (name, values[name],
                                                                                           MEMLOCK_MAX))
        except ValueError as exc:
            errors.append('%s (auto, unlimited or a size)' % exc)
    name = 'deepspeed_config_writer_io_buffer_double'
    if name in values:
        try:
            to_bool(values[name], name)
        except ValueError as exc:
            errors.append(str(exc))
    return errors


def node_writer_plan(facts, options, aio, ranks, drives, engine_memlock=None):
    """:func:`writer_plan` for a node from its facts: the DeepSpeed version the deepspeed facts found for the
    training Python, the NUMA nodes of ``drives`` (namespaces or the volume's md array), the locked-memory budget
    ``options['memlock']`` - ``auto`` (``engine_memlock``: the soft limit the io_uring_engine role settled for the
    training user this run, None when it did not run), ``unlimited`` or a size."""
    installed = (((facts or {}).get('deepspeed') or {}).get('installed') or {})
    memlock = options.get('memlock', 'auto')
    if memlock == 'auto':
        memlock = engine_memlock
    elif memlock not in ('unlimited', None):
        memlock = parse_size(memlock, 'deepspeed_config_writer_memlock')
    if isinstance(memlock, str) and memlock != 'unlimited':
        memlock = parse_size(memlock, 'the io_uring_engine memlock limit')
    plan = writer_plan(options, aio, ranks, drive_numa_nodes(facts, drives), installed.get('version'), memlock)
    if installed.get('error'):
        plan['notes'].append('the training environment\'s DeepSpeed: %s' % installed['error'])
    plan['lines'] = plan_lines(plan)
    return plan
