# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Block queue tuning: read, validate, plan ordered writes, apply with read-back,
and record the values found before the first change.

Pure functions over plain dicts (:func:`validate`, :func:`plan`) plus small I/O
helpers that take every path as an argument, so tests run on fake sysfs trees.

Facts the logic is built on (Linux 6.1 - 6.12, block/blk-sysfs.c, blk-mq-tag.c,
elevator.c):

* Writing ``queue/scheduler`` RESETS ``nr_requests`` (to the tag-set depth for
  ``none``, to 2 x min(depth, 128) for a scheduler). The scheduler is therefore
  always written first and ``nr_requests`` rewritten after any scheduler switch.
* With scheduler ``none``, ``nr_requests`` above the hardware tag depth
  (``mq/<n>/nr_tags``; NVMe: nvme.io_queue_depth - 1) is EINVAL; with a
  scheduler the maximum is 2048 (MAX_SCHED_RQ); below 4 (BLKDEV_MIN_RQ) the
  kernel silently clamps to 4, so such values are refused here.
* ``max_sectors_kb`` must be between the page size and ``max_hw_sectors_kb``.
  It is written before ``read_ahead_kb`` because some kernels (6.10/6.11, where
  committing queue limits recomputes the bdi read-ahead) reset read-ahead when
  ``max_sectors_kb`` changes.
* ``read_ahead_kb`` is stored in pages: a value that is not a multiple of the
  page size in KiB reads back rounded down, so it is refused.
* ``nomerges`` and ``rq_affinity`` take 0, 1 or 2; the kernel accepts 3 and
  silently stores something else, so only 0-2 are allowed.
* Every integer queue attribute is parsed by the kernel's ``queue_var_store``,
  which answers EINVAL above UINT_MAX (4294967295), so larger values are refused.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import errno
import os
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.block_facts import (
    module_params,
    queue_facts,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import (
    exists,
    isdir,
    parse_scheduler,
    read_int,
    read_str,
    realpath,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size, to_bool

# Write order: scheduler before nr_requests (the switch resets nr_requests),
# max_sectors_kb before read_ahead_kb (a limits commit may reset read-ahead).
ORDER = ('scheduler', 'nr_requests', 'max_sectors_kb', 'read_ahead_kb', 'nomerges', 'rq_affinity')
INT_KEYS = ORDER[1:]
MIN_NR_REQUESTS = 4          # BLKDEV_MIN_RQ: smaller writes are clamped to 4
MAX_SCHED_NR_REQUESTS = 2048  # MAX_SCHED_RQ: the limit with an I/O scheduler
UINT_MAX = 4294967295        # queue_var_store: larger values are EINVAL
KNOWN_SCHEDULERS = ('none', 'mq-deadline', 'kyber', 'bfq')
CHOICES = {'nomerges': (0, 1, 2), 'rq_affinity': (0, 1, 2)}
RECORD_SCHEMA_VERSION = 1
DEFAULT_PAGE_SIZE_KB = 4


def page_size_kb():
    try:
        return max(1, os.sysconf('SC_PAGE_SIZE') // 1024)
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not Linux
        return DEFAULT_PAGE_SIZE_KB


def device_name(device, sysfs_root='/sys'):
    """``/dev/nvme1n1``, ``nvme1n1`` or a /dev/disk/by-* link -> ``nvme1n1``.

    Raises ValueError for anything that is not a plain kernel block device name.
    """
    if not isinstance(device, str) or not device.strip():
        raise ValueError('device must be a block device name such as nvme1n1 or /dev/nvme1n1, got %r' % (device,))
    device = device.strip()
    if device.startswith('/dev/') and sysfs_root in ('/sys', '/sys/') and os.path.islink(device):
        device = realpath(device) or device
    name = device[len('/dev/'):] if device.startswith('/dev/') else device
    if not name or '/' in name or name in ('.', '..'):
        raise ValueError('device must be a block device name such as nvme1n1 or /dev/nvme1n1, got %r' % (device,))
    return name


def resolve_read_ahead(read_ahead):
    """A size (1048576, "1M", "1MiB", "1024K") -> read_ahead_kb; ValueError naming the value otherwise."""
    size = parse_size(read_ahead, 'read_ahead')
    if size % 1024:
        raise ValueError('read_ahead: %r is %d bytes, not a whole number of KiB (read_ahead_kb is in KiB)'
                         % (read_ahead, size))
    return size // 1024


# --- reading -------------------------------------------------------------------------------
def read_queue(sysfs_root, name):
    """(current, limits) of /sys/block/<name>/queue, or raise ValueError when it has no queue."""
    ctx = Context(sysfs_root=sysfs_root)
    if not isdir(ctx.sys('block', name, 'queue')):
        if exists(ctx.sys('class', 'block', name, 'partition')):
            raise ValueError('%s is a partition: partitions share the queue of their disk; tune the whole disk'
                             % name)
        raise ValueError('%s has no request queue (%s missing): not a block device on this node'
                         % (name, ctx.sys('block', name, 'queue')))
    facts = queue_facts(ctx, name, module_params(ctx))
    current = dict((key, facts.get(key)) for key in ORDER)
    limits = {
        'schedulers_available': facts.get('schedulers_available') or [],
        'hw_tag_depth': facts.get('hw_tag_depth'),
        'hw_tag_depth_source': facts.get('hw_tag_depth_source'),
        'hw_contexts': facts.get('hw_contexts'),
        'blk_mq': facts.get('hw_contexts') is not None,
        'max_hw_sectors_kb': facts.get('max_hw_sectors_kb'),
        'max_sched_nr_requests': MAX_SCHED_NR_REQUESTS,
        'min_nr_requests': MIN_NR_REQUESTS,
        'page_size_kb': page_size_kb(),
    }
    return current, limits


def identity(sysfs_root, name):
    """Stable identity of a block device: wwid, controller serial/model, nsid, and the record key."""
    base = os.path.join(sysfs_root, 'block', name)
    wwid = read_str(os.path.join(base, 'wwid')) or read_str(os.path.join(base, 'device', 'wwid')) or None
    serial = read_str(os.path.join(base, 'device', 'serial')) or None
    model = read_str(os.path.join(base, 'device', 'model')) or None
    nsid = read_int(os.path.join(base, 'nsid'))
    if wwid:
        key = 'wwid:%s' % wwid
    elif serial:
        key = 'serial:%s/nsid:%s' % (serial, nsid)
    else:
        key = 'name:%s' % name
    return {'name': name, 'wwid': wwid, 'serial': serial, 'model': model, 'nsid': nsid, 'key': key}


# --- validation and plan -----------------------------------------------------------------------
def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def validate(current, wanted, limits, name='device', given=None):
    """Every reason ``wanted`` cannot be written, as messages naming the value and the limit.

    ``given``: {attribute: how the user wrote it} where that differs (read_ahead '1M' for read_ahead_kb), shown
    beside the attribute in the messages."""
    errors = []
    given = given or {}
    for key in sorted(wanted):
        if key not in ORDER:
            errors.append('%s: unknown queue attribute %r (known: %s)' % (name, key, ', '.join(ORDER)))
    for key in INT_KEYS:
        value = wanted.get(key)
        if value is not None and not _is_int(value):
            errors.append('%s: %s must be an integer, got %s %r' % (name, key, type(value).__name__, value))
        elif value is not None and value > UINT_MAX:
            errors.append('%s: %s %d%s is above %d, the largest value the kernel takes for a queue attribute '
                          '(EINVAL)' % (name, key, value, _given(given, key), UINT_MAX))
            wanted = dict(wanted, **{key: None})
    scheduler = wanted.get('scheduler')
    available = list(limits.get('schedulers_available') or [])
    if scheduler is not None:
        if not isinstance(scheduler, str):
            errors.append('%s: scheduler must be a string, got %s %r' % (name, type(scheduler).__name__, scheduler))
            scheduler = None
        elif scheduler not in available and scheduler not in KNOWN_SCHEDULERS:
            errors.append('%s: unknown scheduler %r; this device offers %s (and the kernel loads %s on demand)'
                          % (name, scheduler, ', '.join(available) or 'none', ', '.join(KNOWN_SCHEDULERS)))
            scheduler = None
        elif not limits.get('blk_mq', True) and scheduler != 'none':
            errors.append('%s: scheduler %r refused: the device is bio-based (no blk-mq hardware contexts, '
                          'e.g. an md array or a multipath head) and has no scheduler of its own; tune its members'
                          % (name, scheduler))
    final_scheduler = scheduler if scheduler is not None else current.get('scheduler')

    nr = wanted.get('nr_requests')
    if _is_int(nr):
        depth = limits.get('hw_tag_depth')
        if nr < MIN_NR_REQUESTS:
            errors.append('%s: nr_requests %d is below %d, the kernel minimum (the kernel would silently clamp it '
                          'to %d)' % (name, nr, MIN_NR_REQUESTS, MIN_NR_REQUESTS))
        elif not limits.get('blk_mq', True):
            errors.append('%s: nr_requests refused: the device is bio-based (no blk-mq hardware contexts); '
                          'tune its members' % name)
        elif final_scheduler == 'none' or final_scheduler is None:
            if depth is not None and nr > depth:
                errors.append('%s: nr_requests %d is above the hardware tag depth %d (scheduler none; the kernel '
                              'answers EINVAL). The tag depth follows the nvme module parameter io_queue_depth, '
                              'which needs a reboot to change; or choose a scheduler (limit %d)'
                              % (name, nr, depth, MAX_SCHED_NR_REQUESTS))
        elif nr > MAX_SCHED_NR_REQUESTS:
            errors.append('%s: nr_requests %d is above %d, the kernel maximum with scheduler %s (EINVAL)'
                          % (name, nr, MAX_SCHED_NR_REQUESTS, final_scheduler))

    msk = wanted.get('max_sectors_kb')
    if _is_int(msk):
        hw = limits.get('max_hw_sectors_kb')
        page_kb = limits.get('page_size_kb') or DEFAULT_PAGE_SIZE_KB
        if msk < page_kb:
            errors.append('%s: max_sectors_kb %d is below the page size (%d KiB) (EINVAL)' % (name, msk, page_kb))
        elif hw is not None and msk > hw:
            errors.append('%s: max_sectors_kb %d is above max_hw_sectors_kb %d (EINVAL)' % (name, msk, hw))

    ra = wanted.get('read_ahead_kb')
    if _is_int(ra):
        page_kb = limits.get('page_size_kb') or DEFAULT_PAGE_SIZE_KB
        if ra < 0:
            errors.append('%s: read_ahead_kb %d%s is negative (0 to %d)'
                          % (name, ra, _given(given, 'read_ahead_kb'), UINT_MAX))
        elif ra % page_kb:
            errors.append('%s: read_ahead_kb %d%s is not a multiple of the page size (%d KiB): the kernel would keep '
                          '%d' % (name, ra, _given(given, 'read_ahead_kb'), page_kb, ra - ra % page_kb))

    for key, choices in sorted(CHOICES.items()):
        value = wanted.get(key)
        if _is_int(value) and value not in choices:
            errors.append('%s: %s %d is not one of %s' % (name, key, value, ', '.join(str(c) for c in choices)))
    return errors


def _given(given, key):
    return ' (%s)' % given[key] if key in given else ''


def plan(current, wanted, limits, name='device', given=None):
    """Ordered writes that take ``current`` to ``wanted``, or the validation errors.

    Returns {"errors", "writes": [{"attribute", "value", "reason"}], "before", "after",
    "changed_keys", "warnings"}. ``before``/``after`` hold the managed keys only
    (``after`` is the prediction). ``nr_requests`` is rewritten after a scheduler
    switch even when it already has the wanted value, because the switch resets it.
    """
    wanted = dict((key, value) for key, value in (wanted or {}).items() if value is not None)
    errors = validate(current, wanted, limits, name, given)
    managed = [key for key in ORDER if key in wanted]
    before = dict((key, current.get(key)) for key in managed)
    result = {'errors': errors, 'writes': [], 'before': before, 'after': dict(before),
              'changed_keys': [], 'warnings': []}
    if errors:
        return result
    switch = 'scheduler' in wanted and wanted['scheduler'] != current.get('scheduler')
    for key in managed:
        value = wanted[key]
        if current.get(key) != value:
            reason = 'differs (%s -> %s)' % (current.get(key), value)
        elif key == 'nr_requests' and switch:
            reason = 'the scheduler switch resets nr_requests'
        else:
            continue
        result['writes'].append({'attribute': key, 'value': value, 'reason': reason})
        result['after'][key] = value
    result['changed_keys'] = [key for key in managed if before[key] != wanted[key]]
    if switch and 'nr_requests' not in wanted:
        result['warnings'].append('%s: switching the scheduler %s -> %s resets nr_requests (now %s); set '
                                  'nr_requests too to keep a known value'
                                  % (name, current.get('scheduler'), wanted['scheduler'], current.get('nr_requests')))
    return result


# --- writing -----------------------------------------------------------------------------------
def write_attr(path, value):
    """Write one sysfs attribute; errors (EINVAL...) surface as OSError, never swallowed."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, ('%s\n' % value).encode('ascii'))
    finally:
        os.close(fd)


def read_back(queue_dir, key):
    path = os.path.join(queue_dir, key)
    if key == 'scheduler':
        return parse_scheduler(read_str(path))['active']
    return read_int(path)


def apply(queue_dir, writes, wanted, writer=None, reader=None):
    """Perform ``writes`` in order, then read back every wanted key.

    Returns {"done": [attributes written], "after": {key: read back}, "error": None or message}.
    Stops at the first failed write (later writes may depend on it); a value the
    kernel did not keep is an error naming what was written and what was read.
    """
    writer = writer or write_attr
    reader = reader or read_back
    wanted = dict((key, value) for key, value in (wanted or {}).items() if value is not None)
    done = []
    for item in writes:
        path = os.path.join(queue_dir, item['attribute'])
        try:
            writer(path, item['value'])
        except (IOError, OSError) as exc:
            code = errno.errorcode.get(exc.errno, exc.errno) if getattr(exc, 'errno', None) else None
            after = dict((key, reader(queue_dir, key)) for key in ORDER if key in wanted)
            message = 'writing %s to %s failed: %s' % (item['value'], path, exc.strerror or exc)
            if code:
                message += ' (%s)' % code
            return {'done': done, 'after': after, 'error': message}
        done.append(item['attribute'])
    after = dict((key, reader(queue_dir, key)) for key in ORDER if key in wanted)
    mismatches = ['%s: wrote %s, the kernel kept %s' % (key, wanted[key], after[key])
                  for key in ORDER if key in wanted and after[key] != wanted[key]]
    return {'done': done, 'after': after, 'error': '; '.join(mismatches) if mismatches else None}


# --- the record of original values (the state store's record "block_layer") ---------------------
RECORD = 'block_layer'


def empty_record():
    return {'schema_version': RECORD_SCHEMA_VERSION, 'devices': {}}


def _checked(data, state_dir):
    if data is None:
        return empty_record()
    if not isinstance(data, dict) or not isinstance(data.get('devices'), dict):
        raise ValueError('the record %s has no "devices" mapping; fix or move it aside'
                         % state_store.record_path(state_dir, RECORD))
    return data


def load_record(state_dir):
    """The record as a dict; an empty record when there is none.

    Raises ValueError when it exists but is not a record: a damaged record must
    never be replaced silently (it holds the only copy of the original values).
    """
    try:
        return _checked(state_store.read_record(state_dir, RECORD), state_dir)
    except state_store.StateError as exc:
        raise ValueError(str(exc))


def record_originals(state_dir, ident, values, now=None):
    """Add the device's original values to the record unless it is already there.

    Returns True when the entry was added now, False when it existed (an existing
    entry is never overwritten: it holds the values found before the first change).
    """
    now = now or datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')

    def add(data):
        data = _checked(data, state_dir)
        if ident['key'] not in data['devices']:
            data['devices'][ident['key']] = {
                'device': ident['name'],
                'wwid': ident.get('wwid'),
                'serial': ident.get('serial'),
                'model': ident.get('model'),
                'nsid': ident.get('nsid'),
                'recorded_at': now,
                'values': dict((key, values.get(key)) for key in ORDER),
            }
            data['schema_version'] = RECORD_SCHEMA_VERSION
        return data
    try:
        changed, _before, _after = state_store.update(state_dir, RECORD, add, writer='block_queue')
    except state_store.StateError as exc:
        raise ValueError(str(exc))
    return changed


def drop_record(state_dir, key):
    """Remove one device from the record; the record goes when no device is left. True when removed."""
    def drop(data):
        if data is None:
            return None
        data = _checked(data, state_dir)
        data['devices'].pop(key, None)
        return data if data['devices'] else None
    try:
        changed, _before, _after = state_store.update(state_dir, RECORD, drop, writer='block_queue')
    except state_store.StateError as exc:
        raise ValueError(str(exc))
    return changed


# --- the block_layer role's variables ---------------------------------------------------------------------------
ROLE_PREFIX = 'block_layer_'
NVME_IO_QUEUE_DEPTH = (2, 4095)   # the nvme driver's io_queue_depth range
REBOOT_TIMEOUT = (1, 86400)
NAME_MAX = 255
PATH_MAX = 4096
_HOLDER_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}$')


def _as_int(value):
    """An int from an int or a string of digits (inventory values are often strings); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.match(r'^\s*-?\d+\s*$', value):
        return int(value)
    return None


def _check_int(errors, name, value, low, high, unset_ok=True, what=''):
    if value is None:
        if not unset_ok:
            errors.append('%s: null is not allowed (%d to %d%s)' % (name, low, high, what))
        return
    number = _as_int(value)
    if number is None:
        errors.append('%s: %r is not a whole number (%d to %d%s)' % (name, value, low, high, what))
    elif number < low:
        errors.append('%s: %d is below %d (%d to %d%s)' % (name, number, low, low, high, what))
    elif number > high:
        errors.append('%s: %d is above %d (%d to %d%s)' % (name, number, high, low, high, what))


def _check_file(errors, name, value, suffix, reader):
    if not isinstance(value, str) or not value.strip():
        errors.append('%s: %r is not a file path' % (name, value))
        return
    if '\n' in value or '\0' in value:
        errors.append('%s: %r holds a newline or NUL, which no path the role writes may hold' % (name, value))
    elif not value.startswith('/') or os.path.normpath(value) == '/':
        errors.append('%s: %r is not an absolute path' % (name, value))
    elif not value.endswith(suffix):
        errors.append('%s: %r does not end in %s: %s reads only *%s files' % (name, value, suffix, reader, suffix))
    elif (len(value.encode('utf-8')) >= PATH_MAX
          or any(len(part.encode('utf-8')) > NAME_MAX for part in value.split('/'))):
        errors.append('%s: %r is longer than a path may be (%d bytes a name, %d a path)'
                      % (name, value[:80], NAME_MAX, PATH_MAX - 1))


def _check_list(errors, name, value, item_ok, what, items):
    if not isinstance(value, (list, tuple)):
        errors.append('%s: %r is not a list of %s' % (name, value, items))
        return
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item_ok(item):
            errors.append('%s[%d]: %r is not %s' % (name, index, item, what))


ROLE_VARIABLES = ('block_layer_state', 'block_layer_scheduler', 'block_layer_nr_requests', 'block_layer_read_ahead',
                  'block_layer_max_sectors_kb', 'block_layer_nomerges', 'block_layer_rq_affinity',
                  'block_layer_persist', 'block_layer_udev_rule_path', 'block_layer_nvme_io_queue_depth',
                  'block_layer_modprobe_file', 'block_layer_reboot_ok', 'block_layer_reboot_timeout',
                  'block_layer_allow_mounted_by', 'block_layer_allow_held_by')


def role_input_errors(values, names=None):
    """The block_layer role's variables ``values`` ({name: value}) checked before the role gathers or changes
    anything: a message per bad value naming the variable, the value and the limit, and one per name of ``names``
    (the block_layer_* variables set) that the role does not have (a misspelt name would otherwise be ignored).
    What depends on a drive (its tag depth, max_hw_sectors_kb, the schedulers it offers) is checked per drive by the
    module afterwards."""
    errors = []
    get = values.get
    for name in sorted(set(values) | set(names or [])):
        if name.startswith(ROLE_PREFIX) and name not in ROLE_VARIABLES + ('block_layer_reboot_required',):
            close = [known for known in ROLE_VARIABLES if known.startswith(name[:len(name) - 2])]
            errors.append('%s is not a variable of the block_layer role%s' % (
                name, ' (did you mean %s?)' % close[0] if close else ''))
    state = get('block_layer_state')
    if state not in ('present', 'absent'):
        errors.append('block_layer_state: %r is not present or absent' % (state,))
    scheduler = get('block_layer_scheduler')
    if scheduler is not None and scheduler not in KNOWN_SCHEDULERS:
        errors.append('block_layer_scheduler: %r is not one of %s (or null to leave it)'
                      % (scheduler, ', '.join(KNOWN_SCHEDULERS)))
    _check_int(errors, 'block_layer_nr_requests', get('block_layer_nr_requests'), MIN_NR_REQUESTS, UINT_MAX,
               what="; the drive's tag depth with scheduler none, %d with a scheduler" % MAX_SCHED_NR_REQUESTS)
    read_ahead = get('block_layer_read_ahead')
    if read_ahead is not None:
        try:
            size = parse_size(read_ahead, 'block_layer_read_ahead')
            if size % 1024:
                errors.append('block_layer_read_ahead: %r is %d bytes, not a whole number of KiB' % (read_ahead, size))
            elif size // 1024 > UINT_MAX:
                errors.append('block_layer_read_ahead: %r is %d KiB, above %d KiB, the largest read_ahead_kb the '
                              'kernel takes' % (read_ahead, size // 1024, UINT_MAX))
        except ValueError as exc:
            errors.append(str(exc))
    _check_int(errors, 'block_layer_max_sectors_kb', get('block_layer_max_sectors_kb'), page_size_kb(), UINT_MAX,
               what=" KiB; at most the drive's max_hw_sectors_kb")
    for key in ('block_layer_nomerges', 'block_layer_rq_affinity'):
        _check_int(errors, key, get(key), 0, 2)
    for key in ('block_layer_persist', 'block_layer_reboot_ok'):
        value = get(key)
        try:
            to_bool(value, key)
        except ValueError:
            errors.append('%s: %r is not true or false' % (key, value))
    _check_file(errors, 'block_layer_udev_rule_path', get('block_layer_udev_rule_path'), '.rules', 'udev')
    _check_file(errors, 'block_layer_modprobe_file', get('block_layer_modprobe_file'), '.conf', 'modprobe')
    _check_int(errors, 'block_layer_nvme_io_queue_depth', get('block_layer_nvme_io_queue_depth'),
               *NVME_IO_QUEUE_DEPTH, what=', the nvme driver\'s io_queue_depth')
    _check_int(errors, 'block_layer_reboot_timeout', get('block_layer_reboot_timeout'), *REBOOT_TIMEOUT,
               unset_ok=False, what=' seconds')
    _check_list(errors, 'block_layer_allow_mounted_by', get('block_layer_allow_mounted_by'),
                lambda item: item.startswith('/') and '\n' not in item, 'an absolute mount point', 'mount points')
    _check_list(errors, 'block_layer_allow_held_by', get('block_layer_allow_held_by'),
                lambda item: _HOLDER_RE.match(item) is not None, 'a kernel device name such as md127',
                'kernel device names')
    return errors


def role_file_problems(found, wanted):
    """The files the block_layer role writes, from one ansible.builtin.find of their directories (``found``: its
    result) and ``wanted`` ({variable: path}): a message per path that is a directory or a symlink, or whose
    directory is missing (the role would fail there after the block queues changed)."""
    entries = dict((entry.get('path'), entry) for entry in (found or {}).get('files') or [])
    skipped = set((found or {}).get('skipped_paths') or {})
    problems = []
    for name, path in sorted(wanted.items()):
        directory = os.path.dirname(path)
        entry = entries.get(path)
        if directory in skipped:
            problems.append('%s: %s is in %s, which does not exist or is not a directory' % (name, path, directory))
        elif entry is not None and (entry.get('islnk') or not entry.get('isreg')):
            problems.append('%s: %s is a %s, not a file (move it aside)'
                            % (name, path, 'symlink' if entry.get('islnk') else 'directory or special file'))
    return problems
