# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure planning for the checkpoint volume (``xfs`` role, ``md_array`` module).

Everything here is a function of its arguments (standard library only, no
Ansible import): it runs on the controller (filters) and on the node (modules).

* :func:`parse_chunk` - an md chunk / XFS stripe unit size, refused unless it is
  a power of two of at least 4 KiB.
* :func:`plan_volume` - members, stripe (su/sw), agcount/agsize, log, mkfs.xfs
  options and mount options of the volume, with every input error listed.
* what ``wipefs`` found and whether it may be overwritten: module_utils/wipefs.py; md arrays: module_utils/md.py.
* :func:`verify_volume` - the volume as read back (xfs facts of
  ``checkpoint_io_facts``: xfs_info, /proc/mounts, md) against the plan.

The agcount rule (documented in roles/xfs/README.md): one allocation group per
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

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.identity import (
    check_force,
    clean_id,
    describe,
    expected_from,
    force_names,
    named_by,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.units import check_path_limits, parse_size
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import mount_stripe_bytes

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
TIB = 1024 * GIB

BLOCK_SIZE = 4096                     # XFS data block size the plan assumes (mkfs.xfs default)
CHUNK_MIN = 4 * KIB                   # md and XFS: a stripe unit is at least one page
STRIPE_WIDTH_MAX = 2 * GIB - 1        # mkfs.xfs: "stripe width (2147483648) is too large"
XFS_MIN_AGCOUNT = 2                   # mkfs.xfs: "Filesystem must have at least 2 superblocks"
XFS_MAX_AGCOUNT = 2 ** 32 - 1         # xfs_agnumber_t
XFS_AG_MIN_BYTES = 16 * MIB           # XFS_AG_MIN_BYTES
XFS_AG_MAX_BLOCKS = (TIB - 1) // BLOCK_SIZE   # XFS_AG_MAX_BLOCKS for 4 KiB blocks (1 TiB - 1 block)
INTERNAL_LOG_AG_MIN_BYTES = 128 * MIB  # 64 MiB minimum log (xfsprogs >= 5.15) + AG headers, with headroom
DEFAULT_QUEUES_PER_DRIVE = 4
LABEL_MAX = 12                        # XFS labels hold 12 bytes
OTHERS_WRITE = 0o002
NO_DRIVE = 'no data drive selected: nothing to build the volume on'
LOG_SIZE_MIN = 64 * MIB               # mkfs.xfs: "Log size must be at least 64MB"
LOG_SIZE_MAX = 2 * GIB - 1 * MIB      # XFS_MAX_LOG_BYTES (a bit under 2 GiB)
MD_NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$')
RAID_LEVELS = ('raid0',)
OS_MOUNT_POINTS = ('/', '/boot', '/boot/efi', '/efi', '/usr', '/var', '/home', '/tmp', '/opt', '/srv',
                   '/etc', '/root', '/proc', '/sys', '/dev', '/run', '/mnt', '/media')

# Mount options this role accepts: name -> (kind, how /proc/mounts shows it).
#   flag     shown as itself in /proc/mounts
#   default  the kernel default, not shown: checked by the absence of its opposite
#   size     key=size (binary suffix), compared in bytes
#   int      key=integer
MOUNT_OPTIONS = {
    'noatime': ('flag', None), 'relatime': ('flag', None), 'nodiratime': ('flag', None),
    'lazytime': ('flag', None), 'inode64': ('flag', None), 'inode32': ('flag', None),
    'largeio': ('flag', None), 'nolargeio': ('default', 'largeio'), 'swalloc': ('flag', None),
    'wsync': ('flag', None), 'discard': ('flag', None), 'nodiscard': ('default', 'discard'),
    'filestreams': ('flag', None), 'nosuid': ('flag', None), 'nodev': ('flag', None),
    'noexec': ('flag', None), 'noquota': ('flag', None),
    'logbufs': ('int', None), 'logbsize': ('size', None), 'allocsize': ('size', None),
}
# Refused before anything changes, with the reason.
REFUSED_MOUNT_OPTIONS = {
    'barrier': 'removed in Linux 4.19: the mount fails',
    'nobarrier': 'removed in Linux 4.19: the mount fails',
    'attr2': 'deprecated (attr2 is always on for V5 filesystems) and scheduled for removal from the kernel',
    'noattr2': 'deprecated and scheduled for removal from the kernel',
    'ikeep': 'deprecated and scheduled for removal from the kernel',
    'noikeep': 'deprecated and scheduled for removal from the kernel',
    'osyncisdsync': 'removed from the kernel', 'osyncisosync': 'removed from the kernel',
    'delaylog': 'removed from the kernel', 'nodelaylog': 'removed from the kernel',
    'ihashsize': 'removed from the kernel', 'biosize': 'removed from the kernel (use allocsize)',
    'irixsgid': 'removed from the kernel',
    'sunit': 'the stripe is made by mkfs.xfs from xfs_chunk; a mount option would override it',
    'swidth': 'the stripe is made by mkfs.xfs from xfs_chunk; a mount option would override it',
    'logdev': 'set by the role from xfs_log_device', 'rtdev': 'no realtime device on a checkpoint volume',
    'ro': 'the checkpoint volume must be writable', 'norecovery': 'only valid read-only',
    'noauto': 'the volume must mount at boot (that is the point of the fstab entry)',
    'nofail': 'an fstab-only option: put it in xfs_fstab_options',
    'defaults': 'not a kernel option: list the options instead',
}
FSTAB_ONLY_OPTIONS = ('nofail', '_netdev')
FABRIC_TRANSPORTS = ('tcp', 'rdma', 'fc')
OPPOSITES = {'noatime': ('relatime', 'strictatime'), 'relatime': ('noatime', 'strictatime'),
             'inode64': ('inode32',), 'inode32': ('inode64',), 'largeio': ('nolargeio',),
             'nolargeio': ('largeio',), 'discard': ('nodiscard',), 'nodiscard': ('discard',)}


# ---------------------------------------------------------------- sizes
def is_power_of_two(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0 and value & (value - 1) == 0


def human_bytes(value):
    """``1048576`` -> ``'1 MiB (1048576 bytes)'``; exact binary units only."""
    if not isinstance(value, int) or isinstance(value, bool):
        return repr(value)
    for unit, size in (('TiB', TIB), ('GiB', GIB), ('MiB', MIB), ('KiB', KIB)):
        if value >= size and value % size == 0:
            return '%d %s (%d bytes)' % (value // size, unit, value)
    return '%d bytes' % value


def parse_chunk(value, name='xfs_chunk'):
    """The md chunk (= XFS stripe unit) in bytes: a power of two, at least 4 KiB.

    Raises ValueError naming ``name``, the value and the limit.
    """
    size = parse_size(value, name)
    if size < CHUNK_MIN:
        raise ValueError('%s: %r is %s, below the minimum %s (one page): md and XFS stripe units are at '
                         'least 4K' % (name, value, human_bytes(size), human_bytes(CHUNK_MIN)))
    if not is_power_of_two(size):
        raise ValueError('%s: %r is %s, not a power of two: use 64K, 128K, 256K, 512K, 1M, 2M, 4M...'
                         % (name, value, human_bytes(size)))
    return size


def md_kib(chunk_bytes):
    """The chunk as mdadm's ``--chunk`` argument (``1024K``)."""
    return '%dK' % (chunk_bytes // KIB)


def md_headroom_bytes(member_bytes):
    """mdadm 4.x (metadata 1.1/1.2) data offset headroom: 128 MiB, halved while
    1024 x headroom exceeds the member, never below 1 MiB."""
    headroom = 128 * MIB
    while headroom * 1024 > member_bytes and headroom > MIB:
        headroom //= 2
    return headroom


def estimate_md_size(member_sizes, chunk_bytes):
    """Usable size of an md RAID0 before it exists: each member minus the
    data offset (headroom + 1 MiB of superblock and bad-block log), rounded
    down to whole chunks. Only for planning before the array exists (check
    mode); the real size is read from the array once it is made."""
    total = 0
    for size in member_sizes:
        usable = size - md_headroom_bytes(size) - MIB
        total += max(0, usable // chunk_bytes * chunk_bytes)
    return total


# ---------------------------------------------------------------- allocation groups
def ag_bounds(size_bytes, internal_log=True):
    """(lowest, highest) agcount XFS allows on ``size_bytes`` with this role's AG size limits."""
    dblocks = size_bytes // BLOCK_SIZE
    ag_min = (INTERNAL_LOG_AG_MIN_BYTES if internal_log else XFS_AG_MIN_BYTES) // BLOCK_SIZE
    low = max(XFS_MIN_AGCOUNT, -(-dblocks // XFS_AG_MAX_BLOCKS))
    high = dblocks // ag_min
    return low, high


def mkfs_agcount(dblocks, agsize):
    """The agcount mkfs.xfs makes for ``-d agsize``: a last partial AG smaller
    than 16 MiB is dropped (and the filesystem shortened), a larger one kept."""
    count, rest = divmod(dblocks, agsize)
    if rest >= XFS_AG_MIN_BYTES // BLOCK_SIZE:
        count += 1
    return count


def choose_agsize(dblocks, agcount, su_blocks=0, sw=1, internal_log=True):
    """AG size in blocks giving exactly ``agcount`` AGs, or None.

    Aligned to the stripe unit, never a multiple of the stripe width when there
    is more than one member (else every AG header lands on the same member),
    within the AG size limits (the last AG may be partial, down to XFS's 16 MiB,
    except when it holds the internal log). Larger candidates come first, so
    nothing of the device is dropped when possible.
    """
    if agcount < 1 or dblocks < 1:
        return None
    ag_min = (INTERNAL_LOG_AG_MIN_BYTES if internal_log else XFS_AG_MIN_BYTES) // BLOCK_SIZE
    base = -(-dblocks // agcount)
    if su_blocks:
        up = -(-base // su_blocks) * su_blocks
        down = base // su_blocks * su_blocks
        steps = 2 * max(sw, 1) + 2
        candidates = [up + k * su_blocks for k in range(steps)] + [down - k * su_blocks for k in range(steps)]
    else:
        candidates = [base, base - 1, base + 1]
    for agsize in candidates:
        if agsize < ag_min or agsize > XFS_AG_MAX_BLOCKS:
            continue
        if su_blocks and sw > 1 and agsize % (su_blocks * sw) == 0:
            continue
        if mkfs_agcount(dblocks, agsize) != agcount:
            continue
        rest = dblocks % agsize
        if internal_log and agcount == 2 and rest and rest < ag_min:
            continue  # the internal log goes in AG agcount / 2: with two AGs, the partial last one
        return agsize
    return None


def auto_agcount(members, queues_per_drive, low, high):
    """``members x queues_per_drive`` brought within [low, high], a multiple of
    ``members`` where the bounds allow it."""
    wanted = members * queues_per_drive
    if wanted > high:
        wanted = high - high % members if high - high % members >= max(low, 1) else high
    if wanted < low:
        rounded = -(-low // members) * members
        wanted = rounded if rounded <= high else low
    return wanted


def auto_layout(members, queues_per_drive, low, high, dblocks, su_blocks=0, sw=1, internal_log=True):
    """(agcount, agsize_blocks) for the automatic rule: :func:`auto_agcount`, or
    the nearest count (multiples of ``members`` first) that mkfs.xfs lays out
    exactly with the stripe alignment. (None, None) when there is none."""
    wanted = auto_agcount(members, queues_per_drive, low, high)
    counts = sorted(range(max(low, wanted - 64), min(high, wanted + 64) + 1),
                    key=lambda n: (n % members != 0, abs(n - wanted), -n))
    for count in counts:
        agsize = choose_agsize(dblocks, count, su_blocks, sw, internal_log)
        if agsize is not None:
            return count, agsize
    return None, None


# ---------------------------------------------------------------- mount options
def _option_value_error(key, value):
    if key == 'logbufs':
        if not re.match(r'^\d+$', value) or not 2 <= int(value) <= 8:
            return 'logbufs=%s: the kernel takes 2 to 8 log buffers' % value
        return None
    try:
        size = parse_size(value, key)
    except ValueError as exc:
        return str(exc)
    if key == 'logbsize' and (not is_power_of_two(size) or not 16 * KIB <= size <= 256 * KIB):
        return 'logbsize=%s: the kernel takes a power of two from 16k to 256k' % value
    if key == 'allocsize' and (not is_power_of_two(size) or not 4 * KIB <= size <= GIB):
        return 'allocsize=%s: the kernel takes a power of two from 4k to 1g' % value
    return None


def check_mount_options(options, name='xfs_mount_options'):
    """(normalized list, errors) for the kernel mount options."""
    errors = []
    result = []
    if options is None:
        options = []
    if isinstance(options, str):
        options = [item for item in options.split(',') if item.strip()]
    if not isinstance(options, (list, tuple)):
        return [], ['%s must be a list of mount options, got %r' % (name, options)]
    seen = {}
    for raw in options:
        if not isinstance(raw, str) or not raw.strip() or ',' in raw or ' ' in raw.strip():
            errors.append('%s: %r is not one mount option (one list item per option)' % (name, raw))
            continue
        item = raw.strip()
        key, sep, value = item.partition('=')
        if key in REFUSED_MOUNT_OPTIONS:
            errors.append('%s: %r is refused: %s' % (name, item, REFUSED_MOUNT_OPTIONS[key]))
            continue
        if key not in MOUNT_OPTIONS:
            errors.append('%s: %r is not an XFS mount option this role accepts (accepted: %s)'
                          % (name, item, ', '.join(sorted(MOUNT_OPTIONS))))
            continue
        kind = MOUNT_OPTIONS[key][0]
        if kind in ('flag', 'default') and sep:
            errors.append('%s: %r takes no value' % (name, item))
            continue
        if kind in ('int', 'size'):
            if not sep or not value:
                errors.append('%s: %r needs a value (%s=...)' % (name, item, key))
                continue
            problem = _option_value_error(key, value)
            if problem:
                errors.append('%s: %s' % (name, problem))
                continue
        if key in seen:
            errors.append('%s: %r is given twice' % (name, key))
            continue
        for other in OPPOSITES.get(key, ()):
            if other in seen:
                errors.append('%s: %r contradicts %r' % (name, item, other))
        seen[key] = item
        result.append(item)
    return result, errors


def check_fstab_options(options, name='xfs_fstab_options'):
    """(list, errors) for fstab-only options: nofail and x-* (x-systemd.device-timeout=...)."""
    errors = []
    result = []
    if options is None:
        return [], []
    if not isinstance(options, (list, tuple)):
        return [], ['%s must be a list, got %r' % (name, options)]
    for raw in options:
        item = raw.strip() if isinstance(raw, str) else raw
        if not isinstance(item, str) or not item or ',' in item or ' ' in item:
            errors.append('%s: %r is not one fstab option' % (name, raw))
        elif item in FSTAB_ONLY_OPTIONS or item.startswith('x-'):
            if item not in result:
                result.append(item)
        else:
            errors.append('%s: %r is not an fstab-only option (nofail, x-systemd.*); kernel options go in '
                          'xfs_mount_options' % (name, item))
    return result, errors


def expected_mount_options(options):
    """What /proc/mounts must show: {key: value or True} present, [keys] absent."""
    present = {}
    absent = []
    for item in options:
        key, sep, value = item.partition('=')
        kind, shown_as = MOUNT_OPTIONS.get(key, ('flag', None))
        if kind == 'default':
            absent.append(shown_as)
        elif kind == 'size':
            present[key] = parse_size(value, key)
        elif kind == 'int':
            present[key] = int(value)
        else:
            present[key] = True
    return present, absent


# ---------------------------------------------------------------- paths
def check_path(path, name):
    """Raise ValueError unless ``path`` is absolute and within the kernel's limits (PATH_MAX, NAME_MAX bytes)."""
    if not isinstance(path, str) or not path.startswith('/'):
        raise ValueError('%s: %r is not an absolute path (it must start with /)' % (name, path))
    return check_path_limits(path, name)


def check_dir_mode(value, name='xfs_checkpoint_dir_mode'):
    """The checkpoint directory's mode as an int: octal digits (``'0750'``, or the number YAML made of 0750), not
    writable by others (root writes and verifies checkpoints there). Raises ValueError naming the value."""
    if isinstance(value, bool) or value is None:
        raise ValueError('%s: %r is not a mode; give octal digits such as "0750"' % (name, value))
    if isinstance(value, int):
        mode = value
    elif isinstance(value, str) and re.match(r'^[0-7]{3,4}$', value.strip()):
        mode = int(value.strip(), 8)
    else:
        raise ValueError('%s: %r is not an octal mode (3 or 4 digits 0-7, such as "0750")'
                         % (name, value if not isinstance(value, str) or len(value) < 40 else value[:40] + '...'))
    if not 0 <= mode <= 0o7777:
        raise ValueError('%s: %r is out of range: a mode is 0000 to 7777 (octal)' % (name, value))
    if mode & OTHERS_WRITE:
        raise ValueError('%s: %r lets every user of the node write the checkpoint directory, where the collection '
                         'writes as root; take a mode without write for others, such as 0750 or 0770' % (name, value))
    return mode


def normalize_mount_point(path, name='xfs_mount_point'):
    """An absolute, normalized mount point that is not an OS directory."""
    check_path(path, name)
    norm = posixpath.normpath(path)
    if norm.startswith('//'):
        norm = '/' + norm.lstrip('/')
    if norm in OS_MOUNT_POINTS:
        raise ValueError('%s: %r is an operating system directory; use a directory of its own such as '
                         '/mnt/checkpoints' % (name, path))
    if any(part in ('.', '..') for part in path.split('/')):
        raise ValueError('%s: %r contains . or .. components' % (name, path))
    return norm


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
