# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training user's access to io_uring that the ``io_uring_engine`` role grants: pure logic, no I/O.

* :func:`memlock_plan` - the RLIMIT_MEMLOCK the role writes for the training user: by default a bound derived from
  what io_uring and DeepSpeed aio pin on the node (:func:`memlock_need`) with a stated margin, ``unlimited`` only
  when asked for by that word; never lower than what the node's other limits files already grant.
* :func:`shared_group` - the other members of the group written to ``kernel.io_uring_group`` (every one of them
  may use io_uring once ``kernel.io_uring_disabled`` is 1), and whether the role refuses it.
* :func:`access_record` - the role's record in the state store, accumulated over every run: the first value of
  each sysctl the role changed, every group it added a user to, the memlock found before its limits file, so that
  ``io_uring_engine_state: absent`` undoes what any run changed.

Standard library only (plus the collection's own parsers); the ``engine_access`` filters expose it to the role.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import (
    DEFAULT_DEPTHS,
    MAX_QUEUE_DEPTH,
    MAX_RANKS,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring.engine_profile import (
    MAX_DEPTH,
    UNLIMITED,
    _int_or_error,
    parse_memlock,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size

PREFIX = 'io_uring_engine_'
MIB = 1024 * 1024
# The margin of the bound (README "memlock"): twice what is in flight, for DeepSpeed's double buffering (its
# checkpoint writer fills one buffer while the other is written; its swap buffers are used in pairs) and a
# submission overlapping the completions of the last; plus a fixed headroom for locked memory that is no I/O
# buffer: the io_uring rings themselves (charged to RLIMIT_MEMLOCK on kernels before 5.12), the page rounding of
# every registered buffer, the small mlock users of any process (the kernel's own default limit is 8 MiB).
MARGIN_FACTOR = 2
HEADROOM_BYTES = 64 * MIB
# queue_depth auto: the deepest per-rank depth the depth sweep tries by default (it picks no deeper one).
AUTO_RANK_DEPTH = max(DEFAULT_DEPTHS)
AUTO = 'auto'
EXPLICIT_UNLIMITED = ('unlimited', 'infinity')
RECORD_SCHEMA_VERSION = 2
GENERATOR = 'ai_storage.checkpoint_io.io_uring_engine'


def _var(name):
    return PREFIX + name


def _ceil(value, unit):
    return -(-value // unit) * unit


# --- memlock -------------------------------------------------------------------------------------------------
def memlock_need(ranks, rank_queue_depth, block_size, drives, target_depth):
    """What io_uring and DeepSpeed aio pin for the training user at most, and the bound the role writes.

    Every rank keeps ``rank_queue_depth`` requests of ``block_size`` in flight: the buffers of those requests are
    what io_uring registers (``IORING_REGISTER_BUFFERS``, charged to the USER: the sum over all the user's
    processes counts against RLIMIT_MEMLOCK) or what DeepSpeed's aio handle page-locks (``mlock`` of its pinned
    tensors, charged per process, so at most the same sum). The engine profile registers ``target_depth`` buffers
    of ``block_size`` per drive (one ring per drive). Both may be in use at once, so the need is their sum, and
    the bound is ``MARGIN_FACTOR`` times the need plus ``HEADROOM_BYTES``, rounded up to a MiB.
    Returns {ranks, rank_queue_depth, block_size_bytes, drives, target_depth, ranks_bytes, drives_bytes, need_bytes,
    bound_bytes, formula}; raises ValueError for unusable numbers.
    """
    ranks_bytes = ranks * rank_queue_depth * block_size
    drives_bytes = drives * target_depth * block_size
    need = ranks_bytes + drives_bytes
    bound = _ceil(MARGIN_FACTOR * need + HEADROOM_BYTES, MIB)
    formula = ('%d ranks x queue depth %d x block %d B + %d drives x depth %d x block %d B = %d B pinned at most; '
               'x %d + %d MiB headroom = %d B (%d MiB)' % (
                   ranks, rank_queue_depth, block_size, drives, target_depth, block_size, need, MARGIN_FACTOR,
                   HEADROOM_BYTES // MIB, bound, bound // MIB))
    return {'ranks': ranks, 'rank_queue_depth': rank_queue_depth, 'block_size_bytes': block_size, 'drives': drives,
            'target_depth': target_depth, 'ranks_bytes': ranks_bytes, 'drives_bytes': drives_bytes,
            'need_bytes': need, 'bound_bytes': bound, 'formula': formula}


def _limits_value(value):
    """bytes or 'unlimited' -> the limits.conf value (KiB or unlimited)."""
    return UNLIMITED if value == UNLIMITED else '%d' % (value // 1024)


def _covers(value, need):
    return value == UNLIMITED or (isinstance(value, int) and not isinstance(value, bool) and value >= need)


def _others(io_uring, limits_file, recorded):
    """The memlock the node grants the training user without the role's limits file: the facts' configured
    values when they do not come from that file, else what the record found before the role first wrote it."""
    memlock = (io_uring or {}).get('memlock') or {}
    source = memlock.get('configured_soft_source')
    if source is not None and source.rsplit(':', 1)[0] == limits_file:
        recorded = recorded or {}
        return {'soft': recorded.get('soft_bytes'), 'hard': recorded.get('hard_bytes'),
                'source': recorded.get('soft_source')}
    return {'soft': memlock.get('configured_soft_bytes'), 'hard': memlock.get('configured_hard_bytes'),
            'source': source}


def memlock_plan(value, options, io_uring=None, recorded=None):
    """What the role does with the training user's RLIMIT_MEMLOCK; never raises.

    ``value`` is ``io_uring_engine_memlock``: ``auto`` (the default), the word ``unlimited``, a size (bytes or a
    binary suffix, a whole number of KiB), or None (not managed: the role's file is removed). ``options`` holds
    ranks, rank_queue_depth (an int or ``auto``), block_size, drives (the number selected), target_depth and
    limits_file; ``io_uring`` is the facts' io_uring section; ``recorded`` the record's ``memlock_before``.

    Returns {manage: write|remove, soft, hard (bytes or 'unlimited'), limits_soft, limits_hard (limits.conf
    values), value (what the profile is computed with: bytes, 'unlimited' or None for "as configured"),
    need: memlock_need(...) or None, reason, errors: [...]}.
    """
    errors = []
    plan = {'manage': 'remove', 'soft': None, 'hard': None, 'limits_soft': None, 'limits_hard': None, 'value': None,
            'need': None, 'reason': None, 'errors': errors}
    ranks = _int_or_error(options.get('ranks'), _var('ranks'), 1, MAX_RANKS, errors)
    depth = options.get('rank_queue_depth')
    if isinstance(depth, str) and depth.strip() == AUTO:
        depth = AUTO_RANK_DEPTH
    else:
        depth = _int_or_error(depth, _var('rank_queue_depth'), 1, MAX_QUEUE_DEPTH, errors)
    # target_depth and block_size are the profile's: engine_profile.check_options names their problems
    target = _int_or_error(options.get('target_depth'), _var('target_depth'), 1, MAX_DEPTH, [])
    try:
        block = parse_size(options.get('block_size'), _var('block_size'))
    except ValueError:
        block = None
    drives = options.get('drives') or 0
    need = None
    if None not in (ranks, depth, target, block):
        need = memlock_need(ranks, depth, block, drives, target)
        plan['need'] = need

    if value is None:
        plan['reason'] = '%s is null: not managed (the role\'s limits file is removed)' % _var('memlock')
        return plan
    if isinstance(value, str) and value.strip().lower() == AUTO:
        if need is None:
            return plan
        others = _others(io_uring, options.get('limits_file'), recorded)
        if _covers(others['soft'], need['bound_bytes']):
            plan.update(value=others['soft'], reason='%s already gives the training user %s, at least the bound %d B '
                        '(%s): the role writes no limit of its own' % (
                            others['source'], others['soft'], need['bound_bytes'], need['formula']))
            return plan
        hard = others['hard'] if _covers(others['hard'], need['bound_bytes']) else need['bound_bytes']
        plan.update(manage='write', soft=need['bound_bytes'], hard=hard, value=need['bound_bytes'],
                    reason='auto: %s%s' % (need['formula'], '' if hard == need['bound_bytes'] else
                                           '; the hard limit %s of %s is kept' % (hard, others['source'])))
    elif isinstance(value, str) and value.strip().lower() in EXPLICIT_UNLIMITED:
        plan.update(manage='write', soft=UNLIMITED, hard=UNLIMITED, value=UNLIMITED,
                    reason='%s: unlimited, as asked' % _var('memlock'))
    else:
        negative = isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0 or (
            isinstance(value, str) and value.strip().startswith('-'))
        if negative:
            errors.append('%s: %r is negative: a size such as 512M, auto (the bound the profile needs) or unlimited '
                          '(no limit, asked for by that word)' % (_var('memlock'), value))
            return plan
        try:
            parsed = parse_memlock(value)
        except ValueError as exc:
            errors.append('%s; or auto' % exc)
            return plan
        size = parsed['bytes']
        if need is not None and size < need['need_bytes']:
            errors.append('%s: %r is %d bytes, below the %d bytes the profile pins (%s): raise it to at least %dK, or '
                          'use auto' % (_var('memlock'), value, size, need['need_bytes'], need['formula'],
                                        _ceil(need['need_bytes'], 1024) // 1024))
            return plan
        plan.update(manage='write', soft=size, hard=size, value=size,
                    reason='%s: %r, as asked' % (_var('memlock'), value))
    plan['limits_soft'] = _limits_value(plan['soft'])
    plan['limits_hard'] = _limits_value(plan['hard'])
    return plan


# --- the io_uring group ------------------------------------------------------------------------------------------
def shared_group(group, passwd=None, training_user=None, found_gid=None, allow_shared=False):
    """The other users of the group the role writes to ``kernel.io_uring_group``.

    ``group`` is {name, gid, members} (members: getent group's list), ``passwd`` the ``getent passwd`` mapping
    (user: [x, uid, gid, ...]) for users whose primary group it is, ``found_gid`` the kernel.io_uring_group found.
    Returns {group, gid, members (the group's list), primary (users whose primary group it is), others (every
    user but the training user), grants (whether the role would set kernel.io_uring_group to it), warning,
    error (when the role refuses: it would grant a shared group and ``allow_shared`` is false)}.
    """
    if not isinstance(group, dict) or group.get('name') is None:
        return None
    gid = group.get('gid')
    members = sorted(set(member for member in group.get('members') or [] if member))
    primary = []
    for user, entry in sorted((passwd or {}).items()):
        if isinstance(entry, (list, tuple)) and len(entry) > 2 and str(entry[2]) == str(gid):
            primary.append(user)
    others = sorted(set(members + primary) - set([training_user]))
    grants = found_gid is None or str(found_gid) != str(gid)
    result = {'group': group['name'], 'gid': gid, 'members': members, 'primary': primary, 'others': others,
              'grants': grants, 'warning': None, 'error': None}
    if not others:
        return result
    named = ', '.join('%s%s' % (user, ' (primary group)' if user in primary and user not in members else '')
                      for user in others)
    result['warning'] = ('%s: the io_uring group %s (gid %s) has other members besides %s: %s. With '
                         'kernel.io_uring_disabled=1 every member of kernel.io_uring_group may create io_uring '
                         'instances (io_uring has had privilege-escalation bugs; that is why access is limited)' % (
                             _var('io_uring_group'), group['name'], gid, training_user, named))
    if grants and not allow_shared:
        result['error'] = ('%s; use a group of the training user\'s own (e.g. groupadd io_uring) or set %s: true to '
                           'accept it' % (result['warning'], _var('allow_shared_group')))
    return result


# --- the record ---------------------------------------------------------------------------------------------------
def _legacy(record):
    """A record of schema 1 (the first run's values only) in the layout of schema 2."""
    record = dict(record or {})
    additions = list(record.get('group_additions') or [])
    if 'group_additions' not in record and record.get('io_uring_group') and record.get('user_was_in_group') is False \
            and record.get('training_user'):
        additions.append({'user': record['training_user'], 'group': record['io_uring_group']})
    sysctl = dict((key, value) for key, value in (record.get('sysctl') or {}).items() if value is not None)
    result = {'schema_version': RECORD_SCHEMA_VERSION, 'generator': GENERATOR, 'sysctl': sysctl,
              'group_additions': additions}
    for key in ('memlock_before', 'profile_dir_existed'):
        if key in record:
            result[key] = record[key]
    return result


def access_record(previous, found=None):
    """The record after this run: ``previous`` (the record of earlier runs, either schema, or None) plus what this
    run is about to change (``found``: {sysctl: [{key, value, found}] about to be written, add_user: {user, group}
    or None (the training user is not in the group and the role adds it), memlock: the io_uring facts' memlock
    section, limits_file, profile_dir_existed}). A value recorded once is never overwritten; a group addition is
    recorded once. With ``found`` None: ``previous`` in the current layout (what the revert reads)."""
    record = _legacy(previous)
    if not found:
        return record
    for item in found.get('sysctl') or []:
        key = item['key'].split('.', 1)[-1]
        if item.get('found') is not None and str(item['value']) != str(item['found']) and key not in record['sysctl']:
            record['sysctl'][key] = item['found']
    add = found.get('add_user')
    if add and add.get('user') and add.get('group') and add not in record['group_additions']:
        record['group_additions'].append({'user': add['user'], 'group': add['group']})
    memlock = found.get('memlock') or {}
    source = memlock.get('configured_soft_source')
    if 'memlock_before' not in record and (source is None or source.rsplit(':', 1)[0] != found.get('limits_file')):
        record['memlock_before'] = {'soft_bytes': memlock.get('configured_soft_bytes'),
                                    'hard_bytes': memlock.get('configured_hard_bytes'),
                                    'soft_source': source, 'hard_source': memlock.get('configured_hard_source')}
    if 'profile_dir_existed' not in record and found.get('profile_dir_existed') is not None:
        record['profile_dir_existed'] = found['profile_dir_existed']
    return record
