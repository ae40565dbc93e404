# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Block device topology from sysfs and the mount tables: partitions, holders,
slaves, mounts and swaps, and whether a disk is safe to touch.

All paths come from a Context (see context.Context) so tests run on fake trees.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import (
    exists,
    listdir,
    read_int,
    read_lines,
    read_str,
    realpath,
    unescape_mount_field,
)

# A drive that holds one of these mounts (or swap) is the OS drive: never selected, never written (the verification
# refuses a directory whose filesystem is mounted at one of them, too).
OS_MOUNT_POINTS = ('/', '/boot', '/boot/efi', '/efi', '/usr', '/var')

_MAJMIN_RE = re.compile(r'^\d+:\d+$')


def read_mounts(ctx):
    """Entries of <procfs_root>/self/mounts: [{source, mount_point, fstype, options}]."""
    entries = []
    for line in read_lines(ctx.proc('self', 'mounts')):
        fields = line.split()
        if len(fields) < 4:
            continue
        entries.append({
            'source': unescape_mount_field(fields[0]),
            'mount_point': unescape_mount_field(fields[1]),
            'fstype': fields[2],
            'options': fields[3],
        })
    return entries


def read_mountinfo_majmin(ctx):
    """mount point -> "major:minor" from <procfs_root>/self/mountinfo (for /dev/root)."""
    result = {}
    for line in read_lines(ctx.proc('self', 'mountinfo')):
        fields = line.split()
        if len(fields) < 5 or not _MAJMIN_RE.match(fields[2]):
            continue
        result[unescape_mount_field(fields[4])] = fields[2]
    return result


def read_swaps(ctx):
    """Entries of <procfs_root>/swaps: [{filename, type}]."""
    entries = []
    for line in read_lines(ctx.proc('swaps'))[1:]:
        fields = line.split()
        if len(fields) < 2:
            continue
        entries.append({'filename': unescape_mount_field(fields[0]), 'type': fields[1]})
    return entries


def mount_for_path(mounts, path):
    """The mount entry holding ``path`` (longest mount point prefix), or None.

    ``path`` need not exist yet: a checkpoint directory created later still lands
    on the mount holding its parent.
    """
    path = os.path.normpath(path)
    best = None
    for entry in mounts:
        mp = entry['mount_point']
        if mp == '/' or path == mp or path.startswith(mp.rstrip('/') + '/'):
            if best is None or len(mp) >= len(best['mount_point']):
                best = entry
    return best


class BlockTopology(object):
    """Answers questions about block devices under ctx.sysfs_root."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._mounts = None
        self._swaps = None
        self._usages = None
        self._resolved = {}

    # --- sysfs layout -------------------------------------------------------
    def class_dir(self, name):
        """/sys/class/block/<name> (disks and partitions alike)."""
        return self.ctx.sys('class', 'block', name)

    def is_partition(self, name):
        return exists(os.path.join(self.class_dir(name), 'partition'))

    def parent_disk(self, name):
        """Whole disk of a partition (nvme0n1p1 -> nvme0n1); the name itself for a disk."""
        if not self.is_partition(name):
            return name
        target = realpath(self.class_dir(name))
        if target:
            parent = os.path.basename(os.path.dirname(target))
            if parent:
                return parent
        return name

    def partitions(self, disk):
        """Partition names of a whole disk, from the disk's own sysfs directory."""
        base = self.ctx.sys('block', disk)
        return [entry for entry in listdir(base)
                if entry.startswith(disk) and exists(os.path.join(base, entry, 'partition'))]

    def holders(self, name):
        return listdir(os.path.join(self.class_dir(name), 'holders'))

    def slaves(self, name):
        return listdir(os.path.join(self.class_dir(name), 'slaves'))

    def dm_name(self, name):
        return read_str(os.path.join(self.class_dir(name), 'dm', 'name'))

    def label(self, name):
        """"dm-0 (vg-root)" for device-mapper devices, the kernel name otherwise."""
        dm = self.dm_name(name) if name.startswith('dm-') else None
        return '%s (%s)' % (name, dm) if dm else name

    def lower_devices(self, name, _seen=None):
        """All block devices ``name`` sits on (itself, parent disks, slaves, recursively)."""
        seen = set() if _seen is None else _seen
        if not name or name in seen:
            return seen
        seen.add(name)
        if self.is_partition(name):
            self.lower_devices(self.parent_disk(name), seen)
        for slave in self.slaves(name):
            self.lower_devices(slave, seen)
        return seen

    # --- mount sources ------------------------------------------------------
    def resolve_source(self, source, mount_point=None):
        """Kernel block device name behind a mount source ("/dev/mapper/vg-root" -> "dm-0")."""
        key = (source, mount_point)
        if key in self._resolved:
            return self._resolved[key]
        name = self._resolve_source(source, mount_point)
        self._resolved[key] = name
        return name

    def _resolve_source(self, source, mount_point):
        if not source or not source.startswith('/dev/'):
            return None
        rel = source[len('/dev/'):]
        if rel == 'root' and mount_point:
            majmin = read_mountinfo_majmin(self.ctx).get(mount_point)
            if majmin:
                target = realpath(self.ctx.sys('dev', 'block', majmin))
                if target and exists(target):
                    return os.path.basename(target)
            return None
        dev_path = self.ctx.dev(rel)
        if os.path.islink(dev_path):
            target = realpath(dev_path)
            if target:
                candidate = os.path.basename(target)
                if exists(self.class_dir(candidate)):
                    return candidate
        candidate = os.path.basename(rel)
        if exists(self.class_dir(candidate)):
            return candidate
        if rel.startswith('mapper/'):
            wanted = rel[len('mapper/'):]
            for entry in listdir(self.ctx.sys('class', 'block')):
                if entry.startswith('dm-') and self.dm_name(entry) == wanted:
                    return entry
        return None

    def mounts(self):
        if self._mounts is None:
            self._mounts = read_mounts(self.ctx)
        return self._mounts

    def swaps(self):
        if self._swaps is None:
            self._swaps = read_swaps(self.ctx)
        return self._swaps

    def usages(self):
        """Every block-backed use: [{kind: mount|swap, where, device, lower: set()}]."""
        if self._usages is None:
            self._usages = self._compute_usages()
        return self._usages

    def _compute_usages(self):
        result = []
        for entry in self.mounts():
            name = self.resolve_source(entry['source'], entry['mount_point'])
            if name:
                result.append({'kind': 'mount', 'where': entry['mount_point'], 'device': name,
                               'lower': self.lower_devices(name)})
        for swap in self.swaps():
            if swap['filename'].startswith('/dev/') and swap['type'] == 'partition':
                name = self.resolve_source(swap['filename'])
                where = 'swap'
            else:
                holder = mount_for_path(self.mounts(), swap['filename'])
                name = self.resolve_source(holder['source'], holder['mount_point']) if holder else None
                where = 'swap file %s' % swap['filename']
            if name:
                result.append({'kind': 'swap', 'where': where, 'device': name,
                               'lower': self.lower_devices(name)})
        return result

    # --- per-disk verdict ---------------------------------------------------
    def disk_usage(self, disk):
        """Partitions, holders, mounts and the "safe to touch" verdict of one whole disk."""
        parts = self.partitions(disk)
        own = set([disk] + parts)
        holders = []
        for name in [disk] + parts:
            for holder in self.holders(name):
                if holder not in holders:
                    holders.append(holder)

        mount_points = []
        swap = False
        os_roles = []
        reasons = []
        for use in self.usages():
            if disk not in use['lower']:
                continue
            direct = use['device'] in own
            is_os = use['kind'] == 'swap' or use['where'] in OS_MOUNT_POINTS
            role = 'swap' if use['kind'] == 'swap' else use['where']
            if is_os and role not in os_roles:
                os_roles.append(role)
            if direct:
                if use['kind'] == 'swap':
                    swap = True
                elif use['where'] not in mount_points:
                    mount_points.append(use['where'])
            what = 'holds %s' % role if is_os else (
                'used as %s' % role if use['kind'] == 'swap' else 'mounted at %s' % role)
            if direct:
                reasons.append('%s (%s)' % (what, use['device']))
            else:
                reasons.append('%s through %s' % (what, self.label(use['device'])))
        for holder in holders:
            if not any(self.label(holder) in reason for reason in reasons):
                reasons.append('held by %s' % self.label(holder))
        if parts and not reasons:
            reasons.append('has partitions (%s)' % ', '.join(parts))
        return {
            'partitions': parts,
            'partitioned': bool(parts),
            'holders': holders,
            'mounted': bool(mount_points) or swap,
            'mount_points': mount_points,
            'swap': swap,
            'is_os_drive': bool(os_roles),
            'os_roles': os_roles,
            'in_use_reason': '; '.join(reasons) if reasons else None,
        }


def disk_bytes(topology, name):
    """Size of the block device ``name`` in bytes (sysfs ``size`` x 512), None when unreadable."""
    sectors = read_int(os.path.join(topology.class_dir(name), 'size'))
    return sectors * 512 if sectors is not None else None


def raw_write_refusal(topology, name):
    """Why the block device ``name`` must not be written raw, None when nothing stops it: missing, a partition,
    the OS drive, or in use (partitions, holders, mounts, swap - :meth:`BlockTopology.disk_usage`)."""
    if not exists(topology.class_dir(name)):
        return '%s: no such block device in sysfs' % name
    if topology.is_partition(name):
        return '%s is a partition, not a whole disk' % name
    usage = topology.disk_usage(name)
    if usage['is_os_drive']:
        return '%s is the OS drive (%s)' % (name, usage['in_use_reason'])
    if usage['in_use_reason']:
        return '%s is in use: %s' % (name, usage['in_use_reason'])
    return None
