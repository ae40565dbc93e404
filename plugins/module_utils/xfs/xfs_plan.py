# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure planning for the checkpoint volume (``xfs`` role, ``md_array`` module).

Everything here is a function of its arguments (standard library only, no
Ansible import): it runs on the controller (filters) and on the node (modules).

* :func:`xfs_layout.parse_chunk` - an md chunk / XFS stripe unit size, refused unless it is
  a power of two of at least 4 KiB; the sizes and allocation groups: module_utils/xfs/xfs_layout.py.
* the mount options, fstab options and paths checked: module_utils/xfs/mount_options.py.
* :func:`plan_volume` - members, stripe (su/sw), agcount/agsize, log, mkfs.xfs
  options and mount options of the volume, with every input error listed.
* what ``wipefs`` found and whether it may be overwritten: module_utils/common/wipefs.py; md arrays: module_utils/xfs/md.py.
* :func:`verify_volume` - the volume as read back (xfs facts of
  ``checkpoint_io_facts``: xfs_info, /proc/mounts, md) against the plan.

The agcount rule (documented in roles/xfs/README.md; computed in xfs_layout.py): one allocation group per
NVMe I/O queue of every member, ``members x min(io_queues)`` (4 per drive when
the queue count is unknown), so that as many writers as the drives have
hardware queues can allocate in parallel without sharing an AG lock. It is then
bounded by XFS: at least 2 AGs (mkfs.xfs refuses one), AG size at most 1 TiB
minus one block and at least 16 MiB (128 MiB with an internal log: mkfs.xfs
5.15 and later wants a 64 MiB log, which must fit in one AG). The AG size is
computed here (not left to mkfs.xfs), a multiple of the stripe unit and never
a multiple of the stripe width, so AG headers rotate over the members and
mkfs.xfs keeps exactly the planned count.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import posixpath
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import (
    check_force,
    clean_id,
    describe,
    expected_from,
    force_names,
    named_by,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs import mount_stripe_bytes
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.mount_options import (
    MOUNT_OPTIONS,
    check_dir_mode,
    check_fstab_options,
    check_mount_options,
    check_path,
    expected_mount_options,
    normalize_mount_point,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs_layout import (
    BLOCK_SIZE,
    GIB,
    INTERNAL_LOG_AG_MIN_BYTES,
    MIB,
    STRIPE_WIDTH_MAX,
    XFS_AG_MIN_BYTES,
    XFS_MAX_AGCOUNT,
    XFS_MIN_AGCOUNT,
    ag_bounds,
    auto_layout,
    choose_agsize,
    estimate_md_size,
    human_bytes,
    md_kib,
    parse_chunk,
)

DEFAULT_QUEUES_PER_DRIVE = 4
LABEL_MAX = 12                        # XFS labels hold 12 bytes
NO_DRIVE = 'no data drive selected: nothing to build the volume on'
LOG_SIZE_MIN = 64 * MIB               # mkfs.xfs: "Log size must be at least 64MB"
LOG_SIZE_MAX = 2 * GIB - 1 * MIB      # XFS_MAX_LOG_BYTES (a bit under 2 GiB)
MD_NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$')
RAID_LEVELS = ('raid0',)

FABRIC_TRANSPORTS = ('tcp', 'rdma', 'fc')


def _io_queues(member, controllers):
    ctrl = controllers.get(member.get('controller')) or {}
    for key in ('io_queues', 'io_queues_feature'):
        value = ctrl.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _check_agcount(value, errors):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and re.match(r'^\s*-?\d+\s*$', value):
            value = int(value)
        else:
            errors.append('xfs_agcount: %r is not an integer' % (value,))
            return None
    if value < XFS_MIN_AGCOUNT:
        errors.append('xfs_agcount: %d is below the minimum %d (mkfs.xfs needs at least two superblocks)'
                      % (value, XFS_MIN_AGCOUNT))
        return None
    if value > XFS_MAX_AGCOUNT:
        errors.append('xfs_agcount: %d is above the maximum %d of XFS (a 32-bit AG number; the volume\'s own bound '
                      'is far lower, named once its size is known)' % (value, XFS_MAX_AGCOUNT))
        return None
    return value


def _member_entry(member, controllers):
    return {
        'device': member.get('device') or '/dev/' + str(member.get('name')),
        'name': member.get('name'),
        'serial': member.get('serial'),
        'wwid': member.get('wwid'),
        'size_bytes': member.get('size_bytes'),
        'optimal_io_size': member.get('optimal_io_size') or 0,
        'io_queues': _io_queues(member, controllers),
        'transport': (controllers.get(member.get('controller')) or {}).get('transport'),
    }


def _stripe(members, chunk, use_md):
    """(su_bytes, sw, source) of the volume."""
    if use_md:
        return chunk, len(members), 'md RAID0 chunk %s x %d members' % (md_kib(chunk), len(members))
    opt = members[0]['optimal_io_size'] if members else 0
    if isinstance(opt, int) and opt > BLOCK_SIZE and opt % BLOCK_SIZE == 0 and opt <= STRIPE_WIDTH_MAX:
        return opt, 1, 'optimal I/O size of %s (%s)' % (members[0]['device'], human_bytes(opt))
    reason = ('reports no optimal I/O size' if not opt else
              'reports an optimal I/O size of %s, not a multiple of the %d-byte block larger than one block'
              % (human_bytes(opt), BLOCK_SIZE))
    return 0, 0, 'none: %s %s' % (members[0]['device'] if members else 'the drive', reason)


def members_named(names, members):
    """The entries of ``names`` that name one of ``members`` (what md_array may erase; a log device's name is
    xfs_format's)."""
    return [name for name in names if any(named_by(member, [name]) for member in members)]


def forced_verdicts(verdicts, devices, names):
    """:func:`wipefs.signature_verdicts` with a force by name applied: each device (in ``devices`` order, dicts with
    ``serial`` and ``wwid``) gets ``forced`` (the entry of ``names`` that names it, or None), and ``refused`` keeps
    only the foreign devices no name covers; ``forced`` lists the messages of those it covers."""
    result = {'devices': [], 'refused': [], 'forced': []}
    for dev, entry in zip(devices or [], verdicts.get('devices') or []):
        entry = dict(entry, forced=named_by(dev, names) if isinstance(dev, dict) else None)
        result['devices'].append(entry)
    for message, entry in zip(verdicts.get('refused') or [], [d for d in result['devices'] if d['foreign']]):
        if entry['forced']:
            result['forced'].append('%s (xfs_force names it: %s)' % (message, entry['forced']))
        else:
            result['refused'].append(message)
    return result


def revert_plan(namespaces, record, force=None):
    """What ``xfs_state: absent`` may do with the volume the record names.

    ``namespaces``: ``ansible_facts.checkpoint_io.nvme.namespaces`` (the recorded members are found by WWID: kernel
    names change). ``force``: ``xfs_force``. Erasing the role's own signatures (its XFS, its md superblocks) needs
    a force that names every recorded member, by serial or WWID: the filesystem spans them all. A force naming
    only some, or a drive that is not recorded, is an error. Returns ``{errors, erase, force, members:
    [{device, identity}]}``: each recorded member's device now (None when it is gone) and the identity to
    re-check (its name now).
    """
    record = record if isinstance(record, dict) else {}
    by_wwid = {}
    for ns in namespaces or []:
        if isinstance(ns, dict) and ns.get('name') and clean_id(ns.get('wwid')):
            by_wwid[clean_id(ns['wwid'])] = ns
    members = []
    recorded = [m for m in record.get('members') or [] if isinstance(m, dict)]
    for entry in recorded:
        now = by_wwid.get(clean_id(entry.get('wwid')))
        members.append({'device': '/dev/' + now['name'] if now else None,
                        'identity': expected_from(dict(entry, name=now['name'])) if now else None})
    drives = recorded + ([record['log_identity']] if isinstance(record.get('log_identity'), dict) else [])
    names, errors = check_force(force, drives)
    missing = [describe(entry) for entry in recorded if not named_by(entry, names)]
    if names and missing:
        errors.append('xfs_force names only some members of the recorded volume (not %s): its signatures span every '
                      'member, so name all of them to erase them, or none to keep the data' % '; '.join(missing))
    mount_point = record.get('mount_point') if isinstance(record.get('mount_point'), str) else None
    return {'errors': errors, 'erase': bool(names) and not errors, 'force': names,
            'member_force': members_named(names, recorded), 'members': members,
            'fstab_mount_point': fstab_field(mount_point) if mount_point else None}


def fstab_field(value):
    """``value`` as ansible.posix.mount writes it in an fstab field (a backslash, a blank and ``&`` as octal
    escapes: /mnt/check points -> /mnt/check\\040points): the revert finds the line it wrote by this form."""
    return value.replace('\\', '\\134').replace(' ', '\\040').replace('&', '\\046')


def settings_errors(settings):
    """The errors of the settings that do not depend on the drives (:func:`plan_volume` without drives), for a check
    before anything is read from the node."""
    plan = plan_volume([], None, dict(settings or {}, force=None))
    errors = [error for error in plan['errors'] if error != NO_DRIVE]
    if 'force' in (settings or {}):
        try:
            force_names(settings['force'], 'xfs_force')
        except ValueError as exc:
            errors.append(str(exc))
    return errors


def plan_volume(selected, controllers=None, settings=None, target_size_bytes=None, log_identity=None):
    """Plan the checkpoint volume.

    ``selected``: the selected namespaces (``select_drives(...).selected``).
    ``controllers``: ``ansible_facts.checkpoint_io.nvme.controllers`` (for io_queues).
    ``settings``: ``raid_level``, ``chunk``, ``agcount``, ``md_name``, ``md_metadata``,
    ``log_device``, ``log_size``, ``label``, ``mount_point``, ``checkpoint_dir``,
    ``mount_options``, ``fstab_options``.
    ``target_size_bytes``: the size of the device mkfs.xfs will format when it
    is known (the md array once it exists); else it is estimated.
    ``log_identity``: the external log device's identity (``selection.log_device_check``), for ``force``.
    ``settings['force']``: the drives that may be overwritten, by serial or WWID (:func:`check_force`).

    Returns a dict (see the role README); ``errors`` lists every input problem,
    each naming the value and the limit. Never raises on bad input.
    """
    settings = settings or {}
    errors = []
    warnings = []
    ctrl_by_name = {}
    for ctrl in controllers or []:
        if isinstance(ctrl, dict) and ctrl.get('name'):
            ctrl_by_name[ctrl['name']] = ctrl
    members = [_member_entry(m, ctrl_by_name) for m in selected or [] if isinstance(m, dict)]
    plan = {'errors': errors, 'warnings': warnings, 'members': members,
            'record_members': [dict((k, m[k]) for k in ('device', 'serial', 'wwid', 'size_bytes'))
                               for m in members],
            'identities': [expected_from(m) for m in members], 'force': [], 'member_force': [],
            'md': None, 'target': None,
            'target_size_bytes': None, 'size_estimated': False, 'stripe': None, 'agcount': None,
            'agsize_bytes': None, 'agcount_rule': None, 'log': None, 'mkfs': None, 'mount': None,
            'mount_point': None, 'checkpoint_dir': None, 'label': None}

    # --- inputs that do not depend on the drives
    level = settings.get('raid_level', 'raid0')
    if str(level).strip().lower() not in RAID_LEVELS:
        errors.append('xfs_raid_level: %r is not supported; only raid0 (striping for bandwidth, no redundancy: '
                      'checkpoints are rewritten every interval) is' % (level,))
    chunk = None
    try:
        chunk = parse_chunk(settings.get('chunk', '1M'), 'xfs_chunk')
    except ValueError as exc:
        errors.append(str(exc))
    agcount = _check_agcount(settings.get('agcount'), errors)
    md_name = settings.get('md_name') or 'ckpt'
    if not isinstance(md_name, str) or not MD_NAME_RE.match(md_name):
        errors.append('xfs_md_name: %r must be 1 to 32 letters, digits, ".", "_" or "-" (it becomes '
                      '/dev/md/<name>)' % (md_name,))
    label = settings.get('label')
    if label is not None and (not isinstance(label, str) or len(label.encode('utf-8', 'surrogateescape')) > LABEL_MAX
                              or ' ' in label):
        errors.append('xfs_label: %r must be at most %d bytes (UTF-8) without spaces' % (label, LABEL_MAX))
    plan['label'] = label
    mount_point = None
    try:
        mount_point = normalize_mount_point(settings.get('mount_point'))
    except ValueError as exc:
        errors.append(str(exc))
    plan['mount_point'] = mount_point
    checkpoint_dir = settings.get('checkpoint_dir') or mount_point
    if mount_point and checkpoint_dir:
        try:
            check_path(checkpoint_dir, 'xfs_checkpoint_dir')
        except ValueError as exc:
            errors.append(str(exc))
        else:
            norm = posixpath.normpath(checkpoint_dir)
            if norm != mount_point and not norm.startswith(mount_point.rstrip('/') + '/'):
                errors.append('xfs_checkpoint_dir: %r is not on the volume (it must be %s or below it)'
                              % (checkpoint_dir, mount_point))
            plan['checkpoint_dir'] = norm
    for key, check in (('checkpoint_dir_mode', check_dir_mode), ('mdadm_conf', check_path)):
        if key in settings:
            try:
                check(settings[key], 'xfs_' + key)
            except ValueError as exc:
                errors.append(str(exc))
    options, option_errors = check_mount_options(settings.get('mount_options'))
    errors.extend(option_errors)
    fstab_only, fstab_errors = check_fstab_options(settings.get('fstab_options'))
    errors.extend(fstab_errors)
    fabric = [m['device'] for m in members if m.get('transport') in FABRIC_TRANSPORTS]
    if fabric:
        # NVMe-oF members (the nvmeof_rdma role's connections): the mount waits for the network and nvme-cli's
        # reconnect at boot (_netdev orders it after remote-fs-pre), and a target that is down does not stop the boot
        fstab_only += [option for option in ('_netdev', 'nofail') if option not in fstab_only]
        warnings.append('%s reached over NVMe-oF: fstab gets _netdev,nofail' % ', '.join(fabric))

    log_device = settings.get('log_device')
    log_size = None
    if log_device is not None:
        if not isinstance(log_device, str) or not log_device.startswith('/dev/'):
            errors.append('xfs_log_device: %r must be a block device path under /dev' % (log_device,))
            log_device = None
    if settings.get('log_size') is not None:
        if log_device is None and not any(e.startswith('xfs_log_device') for e in errors):
            errors.append('xfs_log_size: set only with xfs_log_device (an internal log is sized by mkfs.xfs)')
        try:
            log_size = parse_size(settings.get('log_size'), 'xfs_log_size')
            if not LOG_SIZE_MIN <= log_size <= LOG_SIZE_MAX:
                errors.append('xfs_log_size: %r is %s; XFS logs are %s to %s'
                              % (settings.get('log_size'), human_bytes(log_size), human_bytes(LOG_SIZE_MIN),
                                 human_bytes(LOG_SIZE_MAX)))
        except ValueError as exc:
            errors.append(str(exc))
    internal_log = log_device is None
    resolved_log = settings.get('log_device_resolved') or log_device
    plan['force'], force_errors = check_force(settings.get('force'),
                                              members + ([log_identity] if log_device and log_identity else []))
    plan['member_force'] = members_named(plan['force'], members)
    errors.extend(force_errors)

    # --- the drives
    if not members:
        errors.append(NO_DRIVE)
        return plan
    for member in members:
        if not isinstance(member['size_bytes'], int) or member['size_bytes'] <= 0:
            errors.append('%s: size unknown in the facts; cannot plan the volume' % member['device'])
    if log_device:
        names = set()
        for member in members:
            names.add(member['device'])
            if member['name']:
                names.add('/dev/' + member['name'])
        if log_device in names or (resolved_log and resolved_log in names):
            errors.append('xfs_log_device: %s is one of the volume\'s members (%s); the external log needs a '
                          'device of its own' % (log_device, ', '.join(m['device'] for m in members)))
    use_md = len(members) > 1
    if errors:
        return plan

    sizes = [m['size_bytes'] for m in members]
    if use_md and max(sizes) - min(sizes) > min(sizes) // 100:
        warnings.append('members differ in size (%s): md RAID0 stripes the common part over all members and '
                        'the rest over fewer, where the stripe alignment does not hold'
                        % ', '.join('%s %s' % (m['device'], human_bytes(m['size_bytes'])) for m in members))
    if use_md:
        md_device = '/dev/md/' + md_name
        plan['md'] = {'name': md_name, 'device': md_device, 'level': 'raid0', 'chunk_bytes': chunk,
                      'chunk': md_kib(chunk), 'metadata': str(settings.get('md_metadata') or '1.2'),
                      'members': [m['device'] for m in members]}
        plan['target'] = md_device
        if target_size_bytes:
            size = target_size_bytes
        else:
            size = estimate_md_size(sizes, chunk)
            plan['size_estimated'] = True
    else:
        plan['target'] = members[0]['device']
        size = target_size_bytes or members[0]['size_bytes']
    plan['target_size_bytes'] = size

    su, sw, source = _stripe(members, chunk, use_md)
    if su and su * sw > STRIPE_WIDTH_MAX:
        errors.append('xfs_chunk: %s x %d members is a stripe width of %s; mkfs.xfs takes less than 2 GiB'
                      % (human_bytes(su), sw, human_bytes(su * sw)))
        return plan
    plan['stripe'] = {'su_bytes': su, 'sw': sw, 'swidth_bytes': su * sw, 'source': source}

    low, high = ag_bounds(size, internal_log)
    ag_min = INTERNAL_LOG_AG_MIN_BYTES if internal_log else XFS_AG_MIN_BYTES
    if high < low:
        errors.append('the volume (%s) is too small for XFS: it needs at least %d AGs of %s'
                      % (human_bytes(size), XFS_MIN_AGCOUNT, human_bytes(ag_min)))
        return plan
    queues = [m['io_queues'] for m in members]
    per_drive = min(queues) if all(queues) else DEFAULT_QUEUES_PER_DRIVE
    dblocks = size // BLOCK_SIZE
    if agcount is None:
        agcount, agsize = auto_layout(len(members), per_drive, low, high, dblocks, su // BLOCK_SIZE, sw,
                                      internal_log)
        if agcount is None:
            errors.append('no AG layout of %s fits a stripe unit of %s: set xfs_agcount'
                          % (human_bytes(size), human_bytes(su)))
            return plan
        plan['agcount_rule'] = ('%d members x %d I/O queues per drive%s = %d, bounded to %d..%d for %s '
                                '(AG size %s to 1 TiB, at least %d AGs) -> %d'
                                % (len(members), per_drive,
                                   '' if all(queues) else ' (queue count unknown, default)',
                                   len(members) * per_drive, low, high, human_bytes(size),
                                   human_bytes(ag_min), XFS_MIN_AGCOUNT, agcount))
    else:
        if not low <= agcount <= high:
            errors.append('xfs_agcount: %d is out of range for a %s%s volume: %d to %d (AG size from %s%s to '
                          '1 TiB, at least %d AGs)'
                          % (agcount, human_bytes(size), ' (estimated)' if plan['size_estimated'] else '',
                             low, high, human_bytes(ag_min), ' with an internal log' if internal_log else '',
                             XFS_MIN_AGCOUNT))
            return plan
        agsize = choose_agsize(dblocks, agcount, su // BLOCK_SIZE, sw, internal_log)
        if agsize is None:
            errors.append('xfs_agcount: no AG size gives exactly %d AGs on %s aligned to a stripe unit of %s (and '
                          'not to the stripe width); choose another count' % (agcount, human_bytes(size),
                                                                              human_bytes(su)))
            return plan
        plan['agcount_rule'] = 'xfs_agcount %d (set explicitly)' % agcount
    plan['agcount'] = agcount
    plan['agsize_bytes'] = agsize * BLOCK_SIZE

    plan['log'] = {'internal': internal_log, 'device': log_device, 'resolved': resolved_log if log_device else None,
                   'size_bytes': log_size,
                   'identity': expected_from(log_identity) if log_device and log_identity else None}
    data = ['agsize=%d' % (agsize * BLOCK_SIZE)]
    if su:
        data = ['su=%d' % su, 'sw=%d' % sw] + data
    else:
        data.append('noalign')
    opts = []
    if label:
        opts += ['-L', label]
    opts += ['-d', ','.join(data)]
    if log_device:
        log = ['logdev=%s' % log_device]
        if log_size:
            log.append('size=%d' % log_size)
        opts += ['-l', ','.join(log)]
    plan['mkfs'] = {'opts': ' '.join(opts), 'options': opts, 'argv': ['mkfs.xfs'] + opts + [plan['target']]}

    kernel = list(options)
    if log_device:
        kernel.append('logdev=%s' % log_device)
    present, absent = expected_mount_options(options)
    plan['mount'] = {
        'options': kernel,
        'opts': ','.join(kernel),
        'fstab_opts': ','.join(kernel + fstab_only),
        'fstab_only': fstab_only,
        'expect_present': present,
        'expect_absent': absent,
    }
    return plan


def verify_volume(plan, fs, md=None):
    """Mismatches between the plan and the volume as read back.

    ``fs``: the entry of ``ansible_facts.checkpoint_io.xfs.filesystems`` for the
    mount point (None when nothing is mounted there). ``md``: defaults to
    ``fs['md']``. Returns a list of messages with both numbers; empty when
    the volume is what was asked.
    """
    problems = []
    if not isinstance(fs, dict):
        return ['nothing is mounted at %s' % plan.get('mount_point')]
    if fs.get('mount_point') != plan.get('mount_point'):
        problems.append('mounted at %s, asked %s' % (fs.get('mount_point'), plan.get('mount_point')))
    for key, wanted in (('agcount', plan.get('agcount')), ('agsize_bytes', plan.get('agsize_bytes')),
                        ('sunit_bytes', (plan.get('stripe') or {}).get('su_bytes')),
                        ('swidth_bytes', (plan.get('stripe') or {}).get('swidth_bytes'))):
        if key == 'agsize_bytes' and plan.get('size_estimated'):
            continue
        if fs.get(key) != wanted:
            problems.append('%s is %s (xfs_info), asked %s' % (key, fs.get(key), wanted))
    log = fs.get('log') or {}
    wanted_log = plan.get('log') or {}
    if log.get('internal') is not wanted_log.get('internal'):
        problems.append('log is %s (xfs_info), asked %s'
                        % ('internal' if log.get('internal') else 'external (%s)' % log.get('device'),
                           'internal' if wanted_log.get('internal') else 'external on %s' % wanted_log.get('device')))
    elif not wanted_log.get('internal'):
        allowed = set(filter(None, [wanted_log.get('device'), wanted_log.get('resolved'), 'external']))
        if log.get('device') not in allowed:
            problems.append('external log is on %s (xfs_info), asked %s' % (log.get('device'), wanted_log.get('device')))

    mount = plan.get('mount') or {}
    options = fs.get('options') or {}
    for key, wanted in sorted((mount.get('expect_present') or {}).items()):
        actual = options.get(key)
        if wanted is True:
            ok = actual is True
        elif MOUNT_OPTIONS.get(key, ('flag',))[0] == 'size':
            try:
                ok = actual is not None and parse_size(actual, key) == wanted
            except ValueError:
                ok = False
        else:
            ok = actual == wanted
        if not ok:
            problems.append('mount option %s is %s in /proc/mounts, asked %s'
                            % (key, 'absent' if actual is None else actual, wanted))
    for key in mount.get('expect_absent') or []:
        if key in options:
            problems.append('mount option %s is in /proc/mounts, asked without it' % key)
    stripe = plan.get('stripe') or {}
    shown = mount_stripe_bytes(options)
    if stripe.get('su_bytes'):
        if shown.get('sunit_bytes') != stripe['su_bytes'] or shown.get('swidth_bytes') != stripe['swidth_bytes']:
            problems.append('/proc/mounts stripe is sunit %s / swidth %s bytes, asked %s / %s'
                            % (shown.get('sunit_bytes'), shown.get('swidth_bytes'), stripe['su_bytes'],
                               stripe['swidth_bytes']))

    wanted_md = plan.get('md')
    md = md if md is not None else fs.get('md')
    if wanted_md:
        if not isinstance(md, dict):
            problems.append('the filesystem is not on an md array, asked %s' % wanted_md['device'])
        else:
            if md.get('level') != 'raid0':
                problems.append('md level is %s, asked raid0' % md.get('level'))
            if md.get('chunk_bytes') != wanted_md['chunk_bytes']:
                problems.append('md chunk is %s bytes, asked %s' % (md.get('chunk_bytes'), wanted_md['chunk_bytes']))
            have = sorted(md.get('members') or [])
            want = sorted(m['name'] or os.path.basename(m['device']) for m in plan.get('members') or [])
            if have != want:
                problems.append('md members are %s, asked %s' % (', '.join(have) or 'none', ', '.join(want)))
    elif isinstance(md, dict) and md:
        problems.append('the filesystem is on md array %s, asked a single drive' % md.get('name'))
    return problems
