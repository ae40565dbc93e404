# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checkpoint volume's mount options, fstab options and paths checked before anything changes (``xfs`` role
inputs): the options this role accepts and refuses, what /proc/mounts shows for them, the mount point and the
checkpoint directory's mode. Pure functions, used by :mod:`xfs_plan` and the ``xfs_volume`` filters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    check_path_limits,
    parse_size,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs_layout import GIB, KIB, is_power_of_two


OTHERS_WRITE = 0o002
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
OPPOSITES = {'noatime': ('relatime', 'strictatime'), 'relatime': ('noatime', 'strictatime'),
             'inode64': ('inode32',), 'inode32': ('inode64',), 'largeio': ('nolargeio',),
             'nolargeio': ('largeio',), 'discard': ('nodiscard',), 'nodiscard': ('discard',)}


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
