# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who a block device is, independent of its kernel name.

Kernel names (``nvme1n1``) are chosen at boot and re-chosen after a controller reset or a hot-plug: the name a
play picked at fact time can point at another drive by the time a destructive step runs. Everything that
formats or overwrites a drive re-reads its identity here, in the same process, immediately before the command,
and refuses when it is not the drive that was selected (:func:`verify`, :func:`pinned`).

Identity, from sysfs only (no command): the namespace's ``wwid`` (the kernel's unique id: UUID, NGUID or EUI-64
as the drive reports them, else vendor + serial + model + nsid), its ``nguid``/``eui``/``uuid`` when the drive
reports them, the controller (or subsystem) ``serial`` and ``model``, the ``nsid``, the size and the current
``major:minor``. A partition is its disk's identity with its own name and size. Two block devices with one
identity key are one namespace reached twice (a dual-ported drive or an NVMe-oF namespace without native
multipath): :func:`duplicate_groups` finds them, and nothing may use both.

A destructive step names the drives it may overwrite by serial or WWID (:func:`force_names`, :func:`named_by`),
never by kernel name and never with a bare ``true``.

Standard library only, no Ansible import: filters (controller) and modules (node) use it alike.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import stat
from contextlib import contextmanager

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import listdir, read_int, read_str
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.wipefs import norm_uuid

# What two devices must share to be the same drive, strongest first. ``wwid`` is what the kernel itself uses.
ID_KEYS = ('wwid', 'nguid', 'eui', 'uuid')
# Ids a drive reports when it has none (all zero).
_NULL_IDS = ('0' * 32, '0' * 16, '00000000-0000-0000-0000-000000000000')
# What a re-identification compares, and what an expected identity carries.
CHECKED_KEYS = ('wwid', 'serial', 'size_bytes')
# A force that is a boolean in any spelling (the old ``xfs_force: true``): refused, the drives must be named.
_TRUE_WORDS = ('true', 'yes', 'on', '1', 'y')
_FALSE_WORDS = ('false', 'no', 'off', '0', 'n', '')
AGAIN = ('the kernel may have renumbered the drives after a controller reset or a hot-plug. Nothing was changed: '
         'run again (the facts are gathered anew and the drives found by serial)')


class IdentityError(Exception):
    """The device is not the one that was selected, or cannot be identified (the message says which)."""


def clean_id(value):
    """An id as the kernel prints it, lower case without blanks (sysfs prints an EUI-64 as ``00 25 38 ...``);
    None when absent or all zero (no id)."""
    if not value or not isinstance(value, str):
        return None
    text = ''.join(value.split()).lower()
    if not text or text.replace('-', '') in (z.replace('-', '') for z in _NULL_IDS):
        return None
    return text


def read_ids(base):
    """{wwid, nguid, eui, uuid} of the namespace whose sysfs directory is ``base`` (None where the kernel shows
    none or an all-zero id)."""
    return dict((key, clean_id(read_str(os.path.join(base, key)))) for key in ID_KEYS)


def read_identity(name, sysfs_root='/sys'):
    """The identity of the block device ``name`` from sysfs; None when there is no such device.

    Returns ``{name, dev, wwid, nguid, eui, uuid, serial, model, nsid, size_bytes, partition, disk}`` (absent
    attributes None). ``serial`` and ``model`` are the controller's, or for a native-multipath head the
    subsystem's. A partition (``partition`` its number, ``disk`` its disk) carries its disk's ids.
    """
    if not isinstance(name, str) or not name or '/' in name or name in ('.', '..'):
        return None
    base = os.path.join(sysfs_root, 'class', 'block', name)
    if not os.path.isdir(base):
        return None
    partition = read_int(os.path.join(base, 'partition'))
    disk_dir = os.path.dirname(os.path.realpath(base)) if partition is not None else base
    serial = read_str(os.path.join(disk_dir, 'device', 'serial')) or None
    model = read_str(os.path.join(disk_dir, 'device', 'model')) or None
    if serial is None:
        # A native-multipath head (nvmeXnY of nvme-subsysN): its parent device is the subsystem.
        parent = os.path.dirname(os.path.realpath(disk_dir))
        serial = read_str(os.path.join(parent, 'serial')) or None
        model = model or read_str(os.path.join(parent, 'model')) or None
    sectors = read_int(os.path.join(base, 'size'))
    found = {
        'name': name,
        'dev': read_str(os.path.join(base, 'dev')) or None,
        'serial': serial,
        'model': model,
        'nsid': read_int(os.path.join(disk_dir, 'nsid')),
        'size_bytes': sectors * 512 if sectors is not None else None,
        'partition': partition,
        'disk': os.path.basename(disk_dir) if partition is not None else None,
    }
    found.update(read_ids(disk_dir))
    found['serial_namespaces'] = _namespaces_of(disk_dir)
    return found


def _namespaces_of(disk_dir):
    """How many namespaces the controller (or, for a multipath head, the subsystem) of ``disk_dir`` has."""
    parent = os.path.dirname(os.path.realpath(disk_dir))
    if not re.match(r'^nvme(\d+|-subsys\d+)$', os.path.basename(parent)):
        return None  # not below an NVMe controller or subsystem (a partition, another kind of device)
    try:
        names = os.listdir(parent)
    except OSError:
        return None
    count = len([n for n in names if re.match(r'^nvme\d+n\d+$', n)])
    return count or None


def identity_key(identity):
    """The id two paths to one namespace share (``wwid``, else NGUID, EUI-64 or UUID), or None."""
    if not isinstance(identity, dict):
        return None
    for key in ID_KEYS:
        value = clean_id(identity.get(key))
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
        if not isinstance(entry, dict):
            continue
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
        'wwid': clean_id(entry.get('wwid')),
        'serial': entry.get('serial'),
        'size_bytes': entry.get('size_bytes'),
    }


# The keys an expected identity may carry: what expected_from() gives, plus what read_identity() returns (so a
# caller may hand back an identity it read).
EXPECTED_KEYS = ('name', 'device', 'wwid', 'serial', 'size_bytes', 'nguid', 'eui', 'uuid', 'model', 'nsid', 'dev',
                 'partition', 'disk', 'serial_namespaces')


def check_expected(value, name):
    """``value`` as an expected identity (a dict of :data:`EXPECTED_KEYS` with at least one of ``wwid``,
    ``serial``, ``size_bytes``; strings and a whole ``size_bytes``); raises ValueError naming ``name``."""
    if not isinstance(value, dict) or not value:
        raise ValueError('%s: %r is not a drive identity: give a dict with its wwid, serial and/or size_bytes as the '
                         'facts show them' % (name, value))
    unknown = sorted(str(key) for key in value if key not in EXPECTED_KEYS)
    if unknown:
        raise ValueError('%s: %r has unknown keys %s (known: %s)'
                         % (name, value, ', '.join(unknown), ', '.join(EXPECTED_KEYS)))
    for key in ('wwid', 'serial', 'name', 'device', 'nguid', 'eui', 'uuid', 'model'):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise ValueError('%s: %s %r in %r is not a string' % (name, key, value[key], value))
    size = value.get('size_bytes')
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size <= 0):
        raise ValueError('%s: size_bytes %r in %r is not a positive whole number of bytes' % (name, size, value))
    if not any(value.get(key) not in (None, '') for key in CHECKED_KEYS):
        raise ValueError('%s: %r identifies nothing: give its wwid, serial and/or size_bytes as the facts show them'
                         % (name, value))
    return value


def describe(identity):
    """``serial DATA0001, wwid eui.0001, 4294967296 bytes`` (what is known of an identity), for messages."""
    if not isinstance(identity, dict):
        return 'nothing'
    parts = []
    for key, label in (('serial', 'serial %s'), ('wwid', 'wwid %s'), ('size_bytes', '%s bytes')):
        value = identity.get(key)
        if value not in (None, ''):
            parts.append(label % (value,))
    return ', '.join(parts) or 'no identity'


def mismatch(expected, found, where=None):
    """Why ``found`` (:func:`read_identity`) is not the ``expected`` drive, or None.

    Every key ``expected`` gives (``wwid``, ``serial``, ``size_bytes``) must be equal; ``expected`` with none of
    them identifies nothing and is refused (a destructive step never runs on a name alone). ``where``: how the
    device was reached (a path), for the message.
    """
    name = where or expected.get('name') or '?'
    if found is None:
        return '%s: no such block device any more (removed or renamed since the facts were read); %s' % (
            name, AGAIN)
    checked = [key for key in CHECKED_KEYS if expected.get(key) not in (None, '')]
    if not checked:
        return '%s: nothing identifies it (no wwid, serial or size was recorded); refusing to act on a name' % name
    differ = []
    for key in checked:
        want = clean_id(expected[key]) if key == 'wwid' else expected[key]
        have = found.get(key)
        if want != have:
            differ.append('%s %r, expected %r' % (key, have, want))
    if differ:
        now = ' (now %s)' % found['name'] if found.get('name') and found['name'] not in name else ''
        return ('%s%s is not the drive that was selected: %s. Expected %s, found %s; %s'
                % (name, now, ', '.join(differ), describe(expected), describe(found), AGAIN))
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


# ---------------------------------------------------------------- open, check, act, close
def _open_block(path, label=None):
    """A read-only descriptor of the block device ``path`` and its kernel device number."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, 'O_CLOEXEC', 0) | getattr(os, 'O_NONBLOCK', 0))
    except OSError as exc:
        raise IdentityError('%s cannot be opened to check which drive it is (%s); %s'
                            % (label or path, os.strerror(exc.errno), AGAIN))
    info = os.fstat(fd)
    if not stat.S_ISBLK(info.st_mode):
        os.close(fd)
        raise IdentityError('%s is not a block device' % (label or path))
    return fd, info.st_rdev


def pin(path, expected, sysfs_root='/sys', label=None):
    """Open ``path``, check that it is the ``expected`` drive (:func:`mismatch`, whatever kernel name it has now)
    and return ``(fd, identity found)``; the caller closes ``fd`` after its command.

    While a descriptor is open the kernel cannot give the device's name to another drive (the controller and
    namespace instance numbers stay taken until the last opener closes), so a command run on ``path`` before the
    descriptor is closed acts on the drive that was checked, or fails if it is gone. The descriptor is a plain
    read-only open: mdadm, wipefs and mkfs.xfs still get their exclusive open. ``label``: the device's name in
    messages (default ``path``).
    """
    fd, rdev = _open_block(path, label)
    try:
        name = name_of_dev(rdev, sysfs_root)
        found = read_identity(name, sysfs_root) if name else None
        problem = mismatch(expected, found, where=label or path)
        if problem:
            raise IdentityError(problem)
    except Exception:
        os.close(fd)
        raise
    return fd, found


def md_problem(name, md_uuid, members, sysfs_root='/sys'):
    """Why the md array ``name`` is not the array with UUID ``md_uuid`` made of exactly ``members`` (expected
    identities), or None. Members are matched by identity, never by kernel name."""
    base = os.path.join(sysfs_root, 'class', 'block', name)
    gone = gone_members(members, sysfs_root)
    if gone:
        return '%s: %s' % (name, left_node(gone))
    have_uuid = read_str(os.path.join(base, 'md', 'uuid'))
    if have_uuid is None:
        return '%s is not an md array' % name
    if norm_uuid(have_uuid) != norm_uuid(md_uuid):
        return ('%s is not the array that was made: its md UUID is %s, expected %s; %s'
                % (name, have_uuid, md_uuid, AGAIN))
    slaves = [read_identity(slave, sysfs_root) or {'name': slave} for slave in listdir(os.path.join(base, 'slaves'))]
    missing = []
    for want in members or []:
        hit = [found for found in slaves if mismatch(want, found) is None]
        if hit:
            slaves.remove(hit[0])
        else:
            missing.append(describe(want))
    if missing or slaves:
        return ('%s (md UUID %s) is not made of the recorded members: %s%s%s; nothing was changed'
                % (name, have_uuid, 'missing %s' % '; '.join(missing) if missing else '',
                   '; ' if missing and slaves else '',
                   'not recorded %s' % '; '.join('%s (%s)' % (s['name'], describe(s)) for s in slaves)
                   if slaves else ''))
    return None


def left_node(gone):
    """What to say about array members that no drive of the node is now (:func:`gone_members`)."""
    return ('%s, a member of the array, left the node after the array was made (hot-removed, or its controller '
            'failed): the array cannot be used and nothing was changed. Put the drive back (or replace it and revert '
            'with xfs_state: absent), then run again: the next run assembles the array again, without force'
            % '; '.join(gone))


def gone_members(members, sysfs_root='/sys'):
    """The expected ``members`` that no block device of the node is now (described for messages)."""
    found = [read_identity(entry, sysfs_root) for entry in listdir(os.path.join(sysfs_root, 'class', 'block'))
             if not entry.startswith(('md', 'loop', 'dm-', 'ram', 'zram'))]
    found = [item for item in found if item and not item.get('partition')]
    return [describe(want) for want in members or []
            if isinstance(want, dict) and not any(mismatch(want, item) is None for item in found)]


def pin_md(path, md_uuid, members, sysfs_root='/sys', label=None):
    """Open the md array ``path`` and check its UUID and members (:func:`md_problem`); ``(fd, kernel name)``.
    A member gone from the node is named first: md may have stopped the array already (it is then not there)."""
    gone = gone_members(members, sysfs_root)
    if gone:
        raise IdentityError('%s: %s' % (label or path, left_node(gone)))
    fd, rdev = _open_block(path, label)
    try:
        name = name_of_dev(rdev, sysfs_root)
        problem = md_problem(name, md_uuid, members, sysfs_root) if name else 'unknown device'
        if problem:
            raise IdentityError('%s: %s' % (label or path, problem))
    except Exception:
        os.close(fd)
        raise
    return fd, name


@contextmanager
def pinned(pairs, sysfs_root='/sys'):
    """``with pinned([(path, expected), ...]) as found:`` every device opened and checked (:func:`pin`) before
    the block runs, held open while it runs, closed after. ``expected`` may also be ``{'md_uuid': ...,
    'members': [...]}`` for an md array (:func:`pin_md`); a third item is the device's name in messages. Raises
    :class:`IdentityError` (nothing stays open)."""
    fds = []
    found = []
    try:
        for item in pairs:
            path, expected, label = (tuple(item) + (None,))[:3]
            if 'md_uuid' in expected:
                fd, what = pin_md(path, expected['md_uuid'], expected.get('members'), sysfs_root, label)
            else:
                fd, what = pin(path, expected, sysfs_root, label)
            fds.append(fd)
            found.append(what)
        yield found
    finally:
        for fd in fds:
            os.close(fd)


# ---------------------------------------------------------------- force, by name
def force_names(value, variable='force'):
    """The drives a force names: serials or WWIDs, as a list of strings ([] for none).

    ``None``, ``false`` and ``[]`` name nothing. A bare ``true`` (any spelling) is refused: it would let every
    signed device through, including drives matched only by a model regex. A string is a comma-separated list
    (``-e xfs_force=DATA0001,DATA0002``). Raises ValueError naming ``variable`` and what to write instead.
    """
    if value is None or value is False:
        return []
    if value is True or (isinstance(value, str) and value.strip().lower() in _TRUE_WORDS):
        raise ValueError('%s: %r is no longer accepted: name the drives that may be overwritten, by serial or WWID, '
                         'for example %s: [DATA0001, DATA0002] (a bare true would let every drive with a signature '
                         'through, even one matched only by a model regex)' % (variable, value, variable))
    if isinstance(value, str):
        if value.strip().lower() in _FALSE_WORDS:
            return []
        value = value.split(',')
    if not isinstance(value, (list, tuple)):
        raise ValueError('%s must be a list of drive serials or WWIDs, got %s %r'
                         % (variable, type(value).__name__, value))
    result = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ValueError('%s must hold drive serials or WWIDs as non-empty strings, got %r (quote serials that '
                             'look like numbers)' % (variable, item))
        if item.strip() not in result:
            result.append(item.strip())
    return result


def split_serial_nsid(name):
    """(serial, nsid) of ``SERIAL/NSID`` (one namespace of a controller), else (name, None)."""
    text = (name or '').strip()
    head, sep, tail = text.rpartition('/')
    if sep and head and tail.isdigit() and int(tail) > 0:
        return head, int(tail)
    return text, None


def named_by(identity, names):
    """The entry of ``names`` that names the drive ``identity``, or None: its WWID, NGUID, EUI-64 or UUID (any
    case), ``SERIAL/NSID`` (its controller's serial and its namespace id), or its serial alone where its controller
    has one namespace (``serial_namespaces``; a serial alone names every namespace of a controller that has several,
    so it names none of them: ambiguous_serials() says so). Kernel names never count: renumbering changes them."""
    if not isinstance(identity, dict):
        return None
    ids = set(filter(None, (clean_id(identity.get(key)) for key in ID_KEYS)))
    serial = (identity.get('serial') or '').strip()
    several = (identity.get('serial_namespaces') or 1) > 1
    for name in names or []:
        alone, nsid = split_serial_nsid(name)
        if serial and alone == serial:
            if nsid is None and not several:
                return name
            if nsid is not None and nsid == identity.get('nsid'):
                return name
        if clean_id(name) in ids:
            return name
    return None


def ambiguous_serials(names, identities):
    """The entries of ``names`` that are a bare serial of a controller with several namespaces among
    ``identities``: {name: [the namespaces' descriptions]} (a force or a selection must name one namespace)."""
    out = {}
    for name in names or []:
        alone, nsid = split_serial_nsid(name)
        if nsid is not None:
            continue
        hits = [ident for ident in identities or [] if isinstance(ident, dict)
                and (ident.get('serial') or '').strip() == alone and (ident.get('serial_namespaces') or 1) > 1]
        if hits:
            out[name] = ['%s (%s/%s, wwid %s)' % (ident.get('device') or ident.get('name'), alone,
                                                  ident.get('nsid'), ident.get('wwid')) for ident in hits]
    return out


def unnamed(names, identities):
    """The entries of ``names`` that name none of ``identities`` (a misspelt serial must not pass silently; a bare
    serial of a multi-namespace controller, see ambiguous_serials(), is one of them)."""
    return [name for name in names or [] if not any(named_by(ident, [name]) for ident in identities or [])]


def check_force(value, drives, variable='xfs_force'):
    """(names, errors) of a force (the drives that may be overwritten, by serial or WWID): a bare ``true`` is
    refused, and so is a name that is none of ``drives`` (the members and the log device: a misspelt serial
    must not pass unnoticed)."""
    try:
        names = force_names(value, variable)
    except ValueError as exc:
        return [], [str(exc)]
    ambiguous = ambiguous_serials(names, drives)
    if ambiguous:
        return names, ['%s names %s, the serial of a controller with several namespaces (%s): a force names one '
                       'namespace, as SERIAL/NSID or by its WWID' % (variable, name, '; '.join(found))
                       for name, found in sorted(ambiguous.items())]
    stray = unnamed(names, drives)
    if stray:
        return names, ['%s names %s, which %s none of the drives of this volume (%s); name them by serial or WWID'
                       % (variable, ', '.join(stray), 'is' if len(stray) == 1 else 'are',
                          '; '.join('%s: %s' % (d.get('device') or d.get('name'), describe(d)) for d in drives)
                          or 'none')]
    return names, []
