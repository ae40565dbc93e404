# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who a block device is, independent of its kernel name.

Kernel names (``nvme1n1``) are chosen at boot and re-chosen after a controller reset or a hot-plug: the name a
play picked at fact time can point at another drive by the time a destructive step runs. Everything that
formats or overwrites a drive re-reads its identity here, in the same process, immediately before the command,
and refuses when it is not the drive that was selected (:func:`verify`).

Identity, from sysfs only (no command): the namespace's ``wwid`` (the kernel's unique id: UUID, NGUID or EUI-64
as the drive reports them, else vendor + serial + model + nsid), its ``nguid``/``eui``/``uuid`` when the drive
reports them, the controller (or subsystem) ``serial`` and ``model``, the ``nsid``, the size and the current
``major:minor``. Two block devices with one identity key are one namespace reached twice (a dual-ported drive or
an NVMe-oF namespace without native multipath): :func:`duplicate_groups` finds them, and nothing may use both.

Standard library only, no Ansible import: filters (controller) and modules (node) use it alike.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.sysfs import read_int, read_str

# What two devices must share to be the same drive, strongest first. ``wwid`` is what the kernel itself uses.
ID_KEYS = ('wwid', 'nguid', 'eui', 'uuid')
# Ids a drive reports when it has none (all zero).
_NULL_IDS = ('0' * 32, '0' * 16, '00000000-0000-0000-0000-000000000000')


class IdentityError(Exception):
    """The device is not the one that was selected, or cannot be identified (the message says which)."""


def _clean_id(value):
    """An id as the kernel prints it, lower case without separators for the all-zero test; None when absent."""
    if not value:
        return None
    text = value.strip().lower()
    if not text or text.replace('-', '').replace(' ', '') in (z.replace('-', '') for z in _NULL_IDS):
        return None
    return text


def read_identity(name, sysfs_root='/sys'):
    """The identity of the block device ``name`` from sysfs; None when there is no such device.

    Returns ``{name, dev, wwid, nguid, eui, uuid, serial, model, nsid, size_bytes}`` (absent attributes None).
    ``serial`` and ``model`` are the controller's, or for a native-multipath head the subsystem's.
    """
    base = os.path.join(sysfs_root, 'class', 'block', name)
    if not os.path.isdir(base):
        return None
    serial = read_str(os.path.join(base, 'device', 'serial')) or None
    model = read_str(os.path.join(base, 'device', 'model')) or None
    if serial is None:
        # A native-multipath head (nvmeXnY of nvme-subsysN): its parent device is the subsystem.
        parent = os.path.dirname(os.path.realpath(base))
        serial = read_str(os.path.join(parent, 'serial')) or None
        model = model or read_str(os.path.join(parent, 'model')) or None
    sectors = read_int(os.path.join(base, 'size'))
    return {
        'name': name,
        'dev': read_str(os.path.join(base, 'dev')) or None,
        'wwid': _clean_id(read_str(os.path.join(base, 'wwid'))),
        'nguid': _clean_id(read_str(os.path.join(base, 'nguid'))),
        'eui': _clean_id(read_str(os.path.join(base, 'eui'))),
        'uuid': _clean_id(read_str(os.path.join(base, 'uuid'))),
        'serial': serial,
        'model': model,
        'nsid': read_int(os.path.join(base, 'nsid')),
        'size_bytes': sectors * 512 if sectors is not None else None,
    }


def identity_key(identity):
    """The id two paths to one namespace share (``wwid``, else NGUID, EUI-64 or UUID), or None."""
    if not isinstance(identity, dict):
        return None
    for key in ID_KEYS:
        value = _clean_id(identity.get(key))
        if value:
            return '%s:%s' % (key, value)
    return None


def duplicate_groups(entries):
    """Entries (dicts with ``name`` and the id keys) that share an identity key: [{key, names}], in name order.

    One namespace reached as two block devices (a dual-ported drive or an NVMe-oF namespace without native
    multipath) shows up here; a native-multipath head is one device and never does.
    """
    by_key = {}
    for entry in entries or []:
        key = identity_key(entry)
        if key is None or not entry.get('name'):
            continue
        names = by_key.setdefault(key, [])
        if entry['name'] not in names:
            names.append(entry['name'])
    return [{'key': key, 'names': sorted(names)} for key, names in sorted(by_key.items()) if len(names) > 1]


def expected_from(entry):
    """What to re-check before a destructive step, from a selected drive (a facts namespace + its serial):
    ``{name, wwid, serial, size_bytes}`` with None where the facts had nothing."""
    return {
        'name': entry.get('name') or os.path.basename(entry.get('device') or '') or None,
        'wwid': _clean_id(entry.get('wwid')),
        'serial': entry.get('serial'),
        'size_bytes': entry.get('size_bytes'),
    }


def mismatch(expected, found):
    """Why ``found`` (:func:`read_identity`) is not the ``expected`` drive, or None.

    Every key ``expected`` gives (``wwid``, ``serial``, ``size_bytes``) must be equal; ``expected`` with none of
    them identifies nothing and is refused (a destructive step never runs on a name alone).
    """
    name = expected.get('name') or '?'
    if found is None:
        return '%s: no such block device any more (removed or renamed since the facts were read)' % name
    checked = [key for key in ('wwid', 'serial', 'size_bytes') if expected.get(key) not in (None, '')]
    if not checked:
        return '%s: nothing identifies it (no wwid, serial or size was recorded); refusing to act on a name' % name
    differ = []
    for key in checked:
        want = _clean_id(expected[key]) if key == 'wwid' else expected[key]
        have = found.get(key)
        if want != have:
            differ.append('%s %r, expected %r' % (key, have, want))
    if differ:
        return ('%s is not the drive that was selected: %s (the kernel may have renumbered the drives after a '
                'reset or hot-plug; gather the facts again and rerun)' % (name, ', '.join(differ)))
    return None


def verify(expected, sysfs_root='/sys'):
    """Re-read the drive ``expected['name']`` and raise :class:`IdentityError` unless it is the expected one.
    Returns the identity read."""
    name = expected.get('name')
    if not name or '/' in name:
        raise IdentityError('%r is not a kernel block device name' % (name,))
    found = read_identity(name, sysfs_root)
    problem = mismatch(expected, found)
    if problem:
        raise IdentityError(problem)
    return found


def name_of_dev(rdev, sysfs_root='/sys'):
    """The kernel name of the block device number ``rdev`` (``os.stat().st_rdev``), None when unknown."""
    link = os.path.join(sysfs_root, 'dev', 'block', '%d:%d' % (os.major(rdev), os.minor(rdev)))
    try:
        return os.path.basename(os.readlink(link).rstrip('/')) or None
    except OSError:
        return None


def verify_fd(fd, expected, sysfs_root='/sys'):
    """Like :func:`verify` for an open block device: the device the descriptor holds must be the expected one
    (its kernel name, then its identity). Returns the identity read."""
    info = os.fstat(fd)
    if not stat.S_ISBLK(info.st_mode):
        raise IdentityError('%s: not a block device' % (expected.get('name') or fd))
    name = name_of_dev(info.st_rdev, sysfs_root)
    if name != expected.get('name'):
        raise IdentityError('%s: the open device is %s now (renumbered); refusing' % (expected.get('name'), name))
    return verify(expected, sysfs_root)
