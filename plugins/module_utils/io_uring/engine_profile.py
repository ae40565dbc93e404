# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The io_uring engine profile: pure logic of the ``io_uring_engine`` role.

Standard library only (plus the collection's own parsers); no Ansible import, so it runs on the controller
(through the ``ai_storage.checkpoint_io.engine_*`` filters) and in unit tests alike.

* :func:`check_options` - every problem with the role's inputs, as messages naming the value and the limit.
* :func:`parse_memlock` - ``io_uring_engine_memlock`` to bytes / ``unlimited`` and the limits.conf value (KiB).
* :func:`io_uring_access` - whether the training user may create io_uring instances after the role.
* :func:`memlock_allows` - whether RLIMIT_MEMLOCK covers the registered buffers (depth x block size).
* :func:`spread_cpus` - submission CPUs (and SQPOLL CPUs) per drive, from the controllers' local CPUs.
* :func:`build_profile` - the engine profile of a node.
* the fio verification job and its verdict: :mod:`engine_verify` (``fio_argv``, ``verify_profile``).
* :func:`profile_file_document` - what to write to the profile file so that a re-run changes nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.remeasure import DEFAULT_DAYS, check_policy
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import absolute_path
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import expand_cpulist
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size, to_bool, to_int

SCHEMA_VERSION = 1
GENERATOR = 'ai_storage.checkpoint_io.io_uring_engine'
PREFIX = 'io_uring_engine_'
MAX_DEPTH = 4096
MAX_CPUS_PER_DRIVE = 64
MAX_RUNTIME_S = 600
# Linux moves at most MAX_RW_COUNT (INT_MAX rounded down to a page) bytes in one read or write.
MAX_BLOCK_SIZE = 2147479552
# The highest CPU number a kernel can have (NR_CPUS is at most 8192).
MAX_CPU = 8191
# RLIMIT_MEMLOCK is a 64-bit count of bytes (all ones: unlimited); limits.conf gives it in KiB.
MAX_MEMLOCK_BYTES = 2 ** 64 - 1024
# The most bytes a verification reads or writes per drive (ckpt_write.MAX_SIZE).
MAX_VERIFY_SIZE = 2 ** 60
# The files the role writes: absolute paths it can create (inputs.absolute_path).
FILE_OPTIONS = ('sysctl_file', 'limits_file', 'profile_file')
MIN_VERIFY_IOS_PER_SLOT = 2
UNLIMITED = 'unlimited'
UNLIMITED_WORDS = ('unlimited', 'infinity', '-1')
VERIFY_MODES = ('read', 'scratch_write')
SCRATCH_NAME = '%s.scratch'
# fio's iodepth_level buckets: "16" counts I/Os submitted while 16..31 were in flight, ">=64" 64 and more.
_BUCKET_FLOORS = (('>=64', 64), ('32', 32), ('16', 16), ('8', 8), ('4', 4), ('2', 2), ('1', 1))
# Verification values that change from run to run (or when a later role retunes the block layer): they are
# reported every run but do not, alone, rewrite the profile file.
VOLATILE_VERIFY_KEYS = ('achieved_depth_share_pct', 'bw_bytes', 'iops', 'clat_p99_ns', 'lat_mean_ns', 'runtime_ms',
                        'io_bytes', 'device_avg_queue', 'nr_requests', 'hw_tag_depth', 'drive_depth_cap', 'capped_by')


# --- small helpers --------------------------------------------------------------------------------------
def _var(name):
    return PREFIX + name


def _int_or_error(value, name, low, high, errors):
    """``value`` as an int in ``low..high``; on failure append a message to ``errors`` and return None."""
    try:
        number = to_int(value, name)
    except ValueError:
        errors.append('%s: %r is not an integer (allowed: %d to %d)' % (name, value, low, high))
        return None
    if number < low or number > high:
        errors.append('%s: %d is outside %d..%d' % (name, number, low, high))
        return None
    return number


def _require_int(value, name, low, high):
    errors = []
    number = _int_or_error(value, name, low, high, errors)
    if errors:
        raise ValueError(errors[0])
    return number


def _bool(value, name):
    return to_bool(value, name)


def format_cpulist(cpus):
    """[0, 1, 2, 5, 7, 8] -> "0-2,5,7-8" (the kernel's cpulist format); [] -> ""."""
    ranges = []
    for cpu in sorted(set(cpus)):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ','.join('%d' % low if low == high else '%d-%d' % (low, high) for low, high in ranges)


def _cpu_list(value, name):
    """A list of CPU numbers from a list of ints or a cpulist string; ValueError otherwise."""
    if value is None:
        return []
    if isinstance(value, str):
        cpus = expand_cpulist(value)
        if cpus is None:
            raise ValueError('%s: %r is not a CPU list (for example [0, 1] or "0-3,8")' % (name, value))
        return cpus
    if not isinstance(value, (list, tuple)):
        raise ValueError('%s: %r is not a list of CPU numbers' % (name, value))
    cpus = []
    for item in value:
        try:
            cpu = to_int(item, name)
        except ValueError:
            raise ValueError('%s: %r is not a CPU number' % (name, item))
        if cpu < 0:
            raise ValueError('%s: %r is not a CPU number' % (name, item))
        if cpu > MAX_CPU:
            raise ValueError('%s: %r is above the highest CPU number %d' % (name, item, MAX_CPU))
        cpus.append(cpu)
    return sorted(set(cpus))


# --- memlock -----------------------------------------------------------------------------------------------
def parse_memlock(value, name=_var('memlock')):
    """``io_uring_engine_memlock`` -> ``{unlimited, bytes, kib, limits_value}``; None for None.

    ``unlimited`` (or ``infinity``, ``-1``) or a size accepted by
    :func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units.parse_size` (``1G``,
    ``512M``, ``1073741824``) that is a whole number of KiB, because limits.conf counts memlock in KiB.
    Raises ValueError naming the value (``"1X"``, ``"1GB"``, ``0``, ``1000``).
    """
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in UNLIMITED_WORDS or (
            not isinstance(value, bool) and isinstance(value, int) and value == -1):
        return {'unlimited': True, 'bytes': None, 'kib': None, 'limits_value': UNLIMITED}
    try:
        size = parse_size(value, name)
    except ValueError as exc:
        raise ValueError('%s; or unlimited' % exc)
    if size % 1024:
        raise ValueError('%s: %r is %d bytes, not a whole number of KiB (limits.conf counts memlock in KiB); '
                         'use for example %dK' % (name, value, size, max(1, size // 1024)))
    if size > MAX_MEMLOCK_BYTES:
        raise ValueError('%s: %r is %d bytes, above the limit %d bytes a memlock limit can hold; use unlimited'
                         % (name, value, size, MAX_MEMLOCK_BYTES))
    return {'unlimited': False, 'bytes': size, 'kib': size // 1024, 'limits_value': '%d' % (size // 1024)}


def memlock_bytes(value):
    """A memlock value as the facts give it (bytes int, ``unlimited`` or None) or as the role takes it."""
    if value is None:
        return None
    if isinstance(value, dict):
        return UNLIMITED if value.get('unlimited') else value.get('bytes')
    if isinstance(value, str) and value.strip().lower() in UNLIMITED_WORDS:
        return UNLIMITED
    if not isinstance(value, bool) and isinstance(value, int):
        return value
    parsed = parse_memlock(value)
    return UNLIMITED if parsed['unlimited'] else parsed['bytes']


def memlock_allows(memlock, required_bytes, uid=None, user='the training user'):
    """(allowed, reason): does RLIMIT_MEMLOCK ``memlock`` cover ``required_bytes`` of registered buffers?

    io_uring charges registered (fixed) buffers to the user's locked memory; a process with CAP_IPC_LOCK
    (uid 0) is not limited. ``memlock`` is bytes, ``unlimited`` or None (not configured: unknown).
    """
    if uid == 0:
        return True, '%s is uid 0 (CAP_IPC_LOCK): registered buffers are not limited by RLIMIT_MEMLOCK' % user
    value = memlock_bytes(memlock)
    if value == UNLIMITED:
        return True, 'RLIMIT_MEMLOCK of %s is unlimited' % user
    if value is None:
        return False, ('RLIMIT_MEMLOCK of %s is not configured in limits.conf or limits.d (it inherits the session '
                       'default, often 8 MiB): set %s to register %d bytes of buffers'
                       % (user, _var('memlock'), required_bytes))
    if value >= required_bytes:
        return True, 'RLIMIT_MEMLOCK %d bytes of %s covers the %d bytes of registered buffers' % (
            value, user, required_bytes)
    return False, ('RLIMIT_MEMLOCK %d bytes of %s is below the %d bytes of registered buffers (drives x depth x '
                   'block size): fixedbufs off; raise %s' % (value, user, required_bytes, _var('memlock')))


# --- io_uring permission --------------------------------------------------------------------------------------
def io_uring_access(found, wanted_disabled=None, wanted_group=None, wanted_group_gid=None, user=None,
                    add_user_to_group=True):
    """Whether ``user`` may create io_uring instances once the role has applied its settings.

    ``found`` is the ``io_uring`` section of checkpoint_io_facts (io_uring_disabled, io_uring_group,
    allowed_for_user, training_user_uid, training_user_groups). ``user`` is ``{name, uid, groups}``.
    Returns ``{sysctl_present, disabled, group, group_gid, allowed, reason}``; ``allowed`` None means it
    cannot be told (the group is known only by a gid the user's groups cannot be compared with).
    """
    found = found or {}
    user = user or {}
    name = user.get('name') or found.get('training_user') or 'the training user'
    uid = user.get('uid', found.get('training_user_uid'))
    groups = list(user.get('groups') or found.get('training_user_groups') or [])
    found_disabled = found.get('io_uring_disabled')
    found_gid = found.get('io_uring_group')
    result = {'sysctl_present': found_disabled is not None, 'disabled': None, 'group': wanted_group,
              'group_gid': wanted_group_gid if wanted_group else found_gid}
    if found_disabled is None:
        result.update(allowed=True, reason='kernel.io_uring_disabled is absent (kernel before 6.6): io_uring is '
                                           'always allowed; nothing to set')
        result['group_gid'] = None
        return result
    disabled = found_disabled if wanted_disabled is None else wanted_disabled
    result['disabled'] = disabled
    if disabled == 0:
        result.update(allowed=True, reason='kernel.io_uring_disabled=0: io_uring is allowed for everyone')
    elif disabled == 2:
        result.update(allowed=False, reason='kernel.io_uring_disabled=2: io_uring is disabled for everyone, %s '
                                            'included' % name)
    elif disabled != 1:
        result.update(allowed=None, reason='kernel.io_uring_disabled=%r is not a known value' % (disabled,))
    elif uid == 0:
        result.update(allowed=True, reason='kernel.io_uring_disabled=1: %s is uid 0 (CAP_SYS_ADMIN)' % name)
    elif wanted_group:
        # The same words whether the user is a member already or the role adds it: the profile describes the
        # state after the role, so the first run and the next one give the same profile.
        if wanted_group in groups or add_user_to_group:
            result.update(allowed=True, reason='kernel.io_uring_disabled=1: %s is in kernel.io_uring_group %s'
                                               % (name, wanted_group))
        else:
            result.update(allowed=False, reason='kernel.io_uring_disabled=1: %s is not in kernel.io_uring_group %s '
                                                'and %s is false' % (name, wanted_group, _var('add_user_to_group')))
    elif found_gid is None or found_gid < 0:
        result.update(allowed=False, reason='kernel.io_uring_disabled=1 and kernel.io_uring_group is unset: only '
                                            'CAP_SYS_ADMIN may use io_uring, not %s; set %s'
                                            % (name, _var('io_uring_group')))
    elif found_disabled == 1 and found.get('allowed_for_user') is not None:
        allowed = bool(found.get('allowed_for_user'))
        result.update(allowed=allowed, reason='kernel.io_uring_disabled=1: %s %s in kernel.io_uring_group %d'
                                              % (name, 'is' if allowed else 'is not', found_gid))
    else:
        result.update(allowed=None, reason='kernel.io_uring_disabled=1 with kernel.io_uring_group %d: cannot tell '
                                           'whether %s is a member; set %s' % (found_gid, name, _var('io_uring_group')))
    return result


# --- input validation --------------------------------------------------------------------------------------------
def check_options(options):
    """Every problem with the role's inputs, as a list of messages (empty: all good). Nothing raises.

    ``options`` holds the role variables without their ``io_uring_engine_`` prefix (state, training_user,
    io_uring_disabled, io_uring_group, memlock, target_depth, block_size, cpus_per_drive, exclude_cpus,
    verify, verify_runtime, verify_size, verify_mode) plus what the role looked up on the node:
    ``user_found`` (bool), ``group_found`` (bool, when io_uring_group is set), ``group_gid`` and ``io_uring``
    (the facts' io_uring section).
    """
    errors = []
    state = options.get('state', 'present')
    if state not in ('present', 'absent'):
        errors.append('%s: %r is not one of present, absent' % (_var('state'), state))
        return errors
    if state == 'absent':
        return errors
    user = options.get('training_user')
    if user is None or (isinstance(user, str) and not user.strip()):
        errors.append('%s is not set: name the user that runs training (or set checkpoint_io_training_user)'
                      % _var('training_user'))
    elif not isinstance(user, str):
        errors.append('%s: %r is not a user name' % (_var('training_user'), user))
    elif options.get('user_found') is False:
        errors.append('%s: user %r does not exist on this node (getent passwd %s found nothing); create it first'
                      % (_var('training_user'), user, user))

    disabled = options.get('io_uring_disabled')
    if disabled is not None:
        disabled = _int_or_error(disabled, _var('io_uring_disabled'), 0, 2, errors)
    group = options.get('io_uring_group')
    if group is not None and (not isinstance(group, (str, int)) or isinstance(group, bool) or not str(group).strip()):
        errors.append('%s: %r is not a group name' % (_var('io_uring_group'), group))
    elif group is not None and options.get('group_found') is False:
        errors.append('%s: group %r does not exist on this node (getent group %s found nothing)%s; create it first'
                      % (_var('io_uring_group'), group, group,
                         ' and %s is 1, which lets only that group and CAP_SYS_ADMIN use io_uring'
                         % _var('io_uring_disabled') if disabled == 1 else ''))

    try:
        parse_memlock(options.get('memlock'))
    except ValueError as exc:
        errors.append(str(exc))

    depth = _int_or_error(options.get('target_depth'), _var('target_depth'), 1, MAX_DEPTH, errors)
    block_size = None
    try:
        block_size = parse_size(options.get('block_size'), _var('block_size'))
    except ValueError as exc:
        errors.append(str(exc))
    if block_size is not None and block_size % 4096:
        errors.append('%s: %r is %d bytes, not a multiple of 4096 (O_DIRECT needs whole logical blocks)'
                      % (_var('block_size'), options.get('block_size'), block_size))
        block_size = None
    if block_size is not None and block_size > MAX_BLOCK_SIZE:
        errors.append('%s: %r is %d bytes, above the limit %d (Linux moves at most that many bytes per I/O)'
                      % (_var('block_size'), options.get('block_size'), block_size, MAX_BLOCK_SIZE))
        block_size = None
    _int_or_error(options.get('cpus_per_drive', 1), _var('cpus_per_drive'), 1, MAX_CPUS_PER_DRIVE, errors)
    try:
        _cpu_list(options.get('exclude_cpus'), _var('exclude_cpus'))
    except ValueError as exc:
        errors.append(str(exc))

    try:
        check_policy(options.get('remeasure', 'auto'), options.get('remeasure_days', DEFAULT_DAYS), _var('remeasure'))
    except ValueError as exc:
        errors.append(str(exc))
    verify = options.get('verify', True)
    try:
        verify = _bool(verify, _var('verify'))
    except ValueError as exc:
        errors.append(str(exc))
        verify = False
    if verify:
        _int_or_error(options.get('verify_runtime', 10), _var('verify_runtime'), 1, MAX_RUNTIME_S, errors)
        if options.get('fio_found') is False:
            errors.append('%s is true but fio is not installed on this node: install it, set %s: true, or set %s: '
                          'false' % (_var('verify'), _var('install_packages'), _var('verify')))
        mode = options.get('verify_mode', 'read')
        if mode not in VERIFY_MODES:
            errors.append('%s: %r is not one of %s' % (_var('verify_mode'), mode, ', '.join(VERIFY_MODES)))
        size = None
        try:
            size = parse_size(options.get('verify_size'), _var('verify_size'))
        except ValueError as exc:
            errors.append(str(exc))
        if size is not None and size > MAX_VERIFY_SIZE:
            errors.append('%s: %r is %d bytes, above the limit %d bytes'
                          % (_var('verify_size'), options.get('verify_size'), size, MAX_VERIFY_SIZE))
            size = None
        if size is not None and depth is not None and block_size is not None:
            needed = MIN_VERIFY_IOS_PER_SLOT * depth * block_size
            if size < needed:
                errors.append('%s: %r is %d bytes, below %d x target depth %d x block size %d = %d bytes: fio could '
                              'not keep %d requests in flight' % (_var('verify_size'), options.get('verify_size'), size,
                                                                  MIN_VERIFY_IOS_PER_SLOT, depth, block_size, needed,
                                                                  depth))

    for key in FILE_OPTIONS:
        if key in options:
            try:
                absolute_path(_var(key), options[key])
            except ValueError as exc:
                errors.append(str(exc))
    packages = options.get('packages')
    if packages is not None:
        if not isinstance(packages, (list, tuple)):
            errors.append('%s: %r is not a list of package names' % (_var('packages'), packages))
        else:
            for index, package in enumerate(packages):
                if not isinstance(package, str) or not package.strip() or len(package.split()) != 1:
                    errors.append('%s[%d]: %r is not a package name (one word, not empty)'
                                  % (_var('packages'), index, package))

    if not errors and options.get('io_uring') is not None:
        access = io_uring_access(options.get('io_uring'), disabled, group if group is None else str(group),
                                 options.get('group_gid'),
                                 {'name': user, 'uid': (options.get('io_uring') or {}).get('training_user_uid'),
                                  'groups': (options.get('io_uring') or {}).get('training_user_groups')},
                                 options.get('add_user_to_group', True))
        if access['allowed'] is not True:
            errors.append('io_uring would not be usable for %s after this role: %s' % (user, access['reason']))
    return errors


# --- CPUs ------------------------------------------------------------------------------------------------------
def spread_cpus(drive_cpus, cpus_per_drive=1, sqpoll=False, exclude=None):
    """Pick submission CPUs (and an SQPOLL CPU) for each drive from its controller's local CPUs.

    ``drive_cpus`` is a list (one entry per drive, in order) of local CPU lists. Drives with the same local
    CPUs (same NUMA node) share that pool: each drive takes ``cpus_per_drive`` submission CPUs plus, with
    ``sqpoll``, one more for the kernel's SQ polling thread, in turn, so the drives of a node spread over its
    CPUs. When a pool has fewer CPUs than its drives need, the assignment wraps around and ``shared`` is true.
    CPUs in ``exclude`` (housekeeping, IRQ) are never picked unless they are all a drive has.

    Returns one ``{submit_cpus, sqpoll_cpu, shared, excluded_ignored}`` per drive; ``submit_cpus`` is []
    when a drive's local CPUs are unknown (no pinning).
    """
    exclude = set(exclude or [])
    per_drive = max(1, int(cpus_per_drive))
    need = per_drive + (1 if sqpoll else 0)
    pools = {}
    keys = []
    for cpus in drive_cpus:
        cpus = sorted(set(cpus or []))
        usable = [cpu for cpu in cpus if cpu not in exclude]
        ignored = bool(cpus) and not usable
        key = tuple(usable or cpus)
        keys.append((key, ignored))
        pools[key] = pools.get(key, 0) + 1
    taken = dict((key, 0) for key in pools)
    result = []
    for key, ignored in keys:
        if not key:
            result.append({'submit_cpus': [], 'sqpoll_cpu': None, 'shared': False, 'excluded_ignored': False})
            continue
        size = len(key)
        start = taken[key] * need
        taken[key] += 1
        slots = [key[(start + offset) % size] for offset in range(need)]
        submit = sorted(set(slots[:per_drive]))
        sqpoll_cpu = slots[per_drive] if sqpoll else None
        shared = pools[key] * need > size
        result.append({'submit_cpus': submit, 'sqpoll_cpu': sqpoll_cpu, 'shared': shared,
                       'excluded_ignored': ignored})
    return result


# --- the profile -----------------------------------------------------------------------------------------------
def _selected(selection):
    if isinstance(selection, dict):
        selection = selection.get('selected')
    if not isinstance(selection, list):
        raise ValueError('engine_profile needs the result of select_drives (or its selected list), got %s'
                         % type(selection).__name__)
    return [drive for drive in selection if isinstance(drive, dict)]


def build_profile(facts, selection, options):
    """The engine profile of one node.

    ``selection`` is the result of select_drives (or its ``selected`` list); ``facts`` is
    ``ansible_facts.checkpoint_io`` (``nvme`` controllers for the local CPUs and NUMA node, ``io_uring`` for the
    found sysctl values and the training user); ``options`` holds the role variables without their prefix
    (training_user, target_depth, block_size, sqpoll, registerfiles, fixedbufs, cpus_per_drive, exclude_cpus,
    memlock, io_uring_disabled, io_uring_group, add_user_to_group) and ``group_gid``.

    The profile depends only on these inputs (no measurement, no time stamp), so the same node and inputs
    give the same profile. Raises ValueError for unusable inputs.
    """
    drives = _selected(selection)
    depth = _require_int(options.get('target_depth'), _var('target_depth'), 1, MAX_DEPTH)
    block_size = parse_size(options.get('block_size'), _var('block_size'))
    per_drive = _require_int(options.get('cpus_per_drive', 1), _var('cpus_per_drive'), 1, MAX_CPUS_PER_DRIVE)
    sqpoll = _bool(options.get('sqpoll', False), _var('sqpoll'))
    registerfiles = _bool(options.get('registerfiles', True), _var('registerfiles'))
    want_fixedbufs = _bool(options.get('fixedbufs', True), _var('fixedbufs'))
    exclude = _cpu_list(options.get('exclude_cpus'), _var('exclude_cpus'))
    io_uring = section(facts, 'io_uring')
    user = options.get('training_user') or io_uring.get('training_user')
    uid = io_uring.get('training_user_uid') if io_uring.get('training_user') in (None, user) else None

    wanted_memlock = parse_memlock(options.get('memlock'))
    if wanted_memlock is not None:
        memlock = memlock_bytes(wanted_memlock)
        memlock_source = _var('memlock')
    else:
        memlock = (io_uring.get('memlock') or {}).get('configured_soft_bytes')
        memlock_source = (io_uring.get('memlock') or {}).get('configured_soft_source')
    buffer_bytes = depth * block_size
    required = buffer_bytes * len(drives)
    memlock_ok, memlock_reason = memlock_allows(memlock, required, uid, user or 'the training user')

    disabled = options.get('io_uring_disabled')
    group = options.get('io_uring_group')
    access = io_uring_access(io_uring, None if disabled is None else to_int(disabled, _var('io_uring_disabled')),
                             None if group is None else str(group), options.get('group_gid'),
                             {'name': user, 'uid': uid, 'groups': io_uring.get('training_user_groups')},
                             _bool(options.get('add_user_to_group', True), _var('add_user_to_group')))

    controllers = {}
    for ctrl in section(facts, 'nvme').get('controllers') or []:
        if isinstance(ctrl, dict) and ctrl.get('name'):
            controllers[ctrl['name']] = ctrl
    local = []
    for drive in drives:
        ctrl = controllers.get(drive.get('controller')) or {}
        cpus = ctrl.get('local_cpus')
        if cpus is None and ctrl.get('local_cpulist'):
            cpus = expand_cpulist(ctrl['local_cpulist'])
        local.append((ctrl, sorted(cpus or [])))
    spread = spread_cpus([pair[1] for pair in local], per_drive, sqpoll, exclude)

    notes = []
    entries = []
    for drive, (ctrl, cpus), cpu_plan in zip(drives, local, spread):
        name = drive.get('name') or (drive.get('device') or '').rsplit('/', 1)[-1]
        fixedbufs = want_fixedbufs and memlock_ok
        lbs = drive.get('logical_block_size')
        if isinstance(lbs, int) and lbs > 0 and block_size % lbs:
            raise ValueError('%s: %d bytes is not a multiple of the logical block size %d of %s'
                             % (_var('block_size'), block_size, lbs, drive.get('device')))
        fio_options = {'ioengine': 'io_uring', 'iodepth': depth, 'bs': block_size, 'direct': 1, 'hipri': 0,
                       'registerfiles': int(registerfiles), 'fixedbufs': int(fixedbufs),
                       'sqthread_poll': int(sqpoll)}
        if cpu_plan['submit_cpus']:
            fio_options['cpus_allowed'] = format_cpulist(cpu_plan['submit_cpus'])
        if sqpoll and cpu_plan['sqpoll_cpu'] is not None:
            fio_options['sqthread_poll_cpu'] = cpu_plan['sqpoll_cpu']
        entry = {
            'device': drive.get('device'),
            'name': name,
            'serial': drive.get('serial'),
            'model': drive.get('model'),
            'wwid': drive.get('wwid'),
            'controller': drive.get('controller'),
            'numa_node': ctrl.get('numa_node'),
            'local_cpus': cpus,
            'local_cpulist': format_cpulist(cpus),
            'submit_cpus': cpu_plan['submit_cpus'],
            'submit_cpulist': format_cpulist(cpu_plan['submit_cpus']),
            'sqpoll': sqpoll,
            'sqthread_poll_cpu': cpu_plan['sqpoll_cpu'],
            'cpus_shared': cpu_plan['shared'],
            'registerfiles': registerfiles,
            'fixedbufs': fixedbufs,
            'fixedbufs_reason': memlock_reason if want_fixedbufs else '%s is false' % _var('fixedbufs'),
            'iodepth': depth,
            'block_size_bytes': block_size,
            'registered_buffer_bytes': buffer_bytes if fixedbufs else 0,
            'fio_options': fio_options,
        }
        if not cpus:
            notes.append('%s: its controller reports no local CPUs (not PCIe, or no NUMA information): no CPU pinning'
                         % name)
        elif cpu_plan['excluded_ignored']:
            notes.append('%s: every local CPU is in %s; they are used anyway' % (name, _var('exclude_cpus')))
        if cpu_plan['shared']:
            notes.append('%s: %d local CPUs for the drives of this NUMA node: CPUs are shared between drives'
                         % (name, len([cpu for cpu in cpus if cpu not in exclude]) or len(cpus)))
        entries.append(entry)
    if want_fixedbufs and not memlock_ok:
        notes.append(memlock_reason)
    if not access['sysctl_present'] and (disabled is not None or group is not None):
        notes.append(access['reason'])
    return {
        'schema_version': SCHEMA_VERSION,
        'generator': GENERATOR,
        'training_user': user,
        'io_uring': {
            'sysctl_present': access['sysctl_present'],
            'disabled': access['disabled'],
            'group': access['group'],
            'group_gid': access['group_gid'],
            'allowed_for_user': access['allowed'],
            'reason': access['reason'],
        },
        'memlock': {'soft_bytes': memlock, 'source': memlock_source, 'required_bytes': required,
                    'covers_fixedbufs': memlock_ok},
        'target_depth': depth,
        'block_size_bytes': block_size,
        'sqpoll': sqpoll,
        'registerfiles': registerfiles,
        'fixedbufs': want_fixedbufs,
        'cpus_per_drive': per_drive,
        'exclude_cpus': exclude,
        'drives': entries,
        'notes': notes,
    }


# --- the file on the node -------------------------------------------------------------------------------------
def _without_verify(document):
    document = copy.deepcopy(document)
    document.pop('verify', None)
    for entry in document.get('drives') or []:
        if isinstance(entry, dict):
            entry.pop('verify', None)
    return document


def _stable(document):
    document = copy.deepcopy(document)
    for entry in document.get('drives') or []:
        if isinstance(entry, dict) and isinstance(entry.get('verify'), dict):
            for key in VOLATILE_VERIFY_KEYS:
                entry['verify'].pop(key, None)
    return document


def profile_file_document(document, existing=None):
    """What the role writes to the profile file: ``document``, or the file's current content when only
    measurements differ.

    The file is rewritten when the profile or a verdict (target, achieved depth, reached) changes, so a re-run
    that measures a different bandwidth changes nothing; the file then keeps the measurement of the run that
    wrote it, and every run's own measurement is in the fact. When fio did not run (check mode, ``verify``
    off) and the profile is the same, the recorded verification is kept. ``existing`` is the file's text or
    parsed content (None or unparsable: write ``document``).
    """
    if isinstance(existing, (bytes, str)):
        try:
            existing = json.loads(existing)
        except ValueError:
            existing = None
    if not isinstance(existing, dict):
        return document
    if _stable(existing) == _stable(document):
        return existing
    if not (document.get('verify') or {}).get('ran') and _without_verify(existing) == _without_verify(document):
        return existing
    return document
