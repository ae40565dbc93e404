# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the measuring modules write: files no user can redirect, and nothing removed that the run did not make.

The checkpoint directories belong to the training user, and the modules run as root. So every file a
measurement writes (a checkpoint shard, a sweep's scratch file, the engine check's scratch file) is made here:

* :func:`open_dir` resolves the directory once, from ``/``, one component at a time with ``O_NOFOLLOW``: a
  symlink is followed only where it lies in a directory no other user can write (``/mnt/ckpt -> /data`` made by
  root), refused where a user could have planted it, and a component swapped after it was looked at is refused.
  It reports the components another user can write (``writable_components``).
* :func:`create` records the run in the state store (record ``scratch``) BEFORE it makes anything, makes a
  directory for the run in the target (``.checkpoint_io.<label>.<random>``, owned by the module's user, mode 0700)
  by descriptor, and every file in it with ``O_CREAT|O_EXCL|O_NOFOLLOW``, sized with ftruncate (sparse, so O_DIRECT
  writes never extend it). fio gets ``/proc/self/fd/<N>`` with the descriptor inherited: no path under the user's
  directory is resolved after the descriptors are open, so renaming the run directory or planting symlinks
  redirects nothing.
* :meth:`RunDir.cleanup` removes only what the run made: each recorded name whose inode is the one made, then the
  run directory if the entry at its name (or, renamed, found by inode in the parent) is still that directory.
* :func:`scratch_reap.reap` (its own file) cleans the recorded runs whose owner is gone (a killed play, a reboot: the state store is on disk)
  or, when a new run holds the node's lease, that belong to another run: it first kills the processes that still
  hold their files open.
* :func:`open_devices` opens raw block devices ``O_WRONLY|O_EXCL`` (refused by the kernel while mounted or held
  by md, which cannot claim them while they are open) and re-identifies each from its descriptor
  (:func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity.verify_fd`).

Standard library only, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import errno
import os
import re
import stat

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import fio_job
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import identity
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import process_start
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store

RECORD = 'scratch'
RUN_PREFIX = '.checkpoint_io.'
MAX_LINKS = 40
MAKE_ATTEMPTS = 5
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
BOOT_ID = '/proc/sys/kernel/random/boot_id'
MADE_SAFE_BY = (
    'every file of the run is made with O_CREAT|O_EXCL|O_NOFOLLOW in a directory made for the run (owned by uid %d, '
    'mode 0700, a unique name), through descriptors opened from / without following a symlink another user could '
    'plant; fio writes the files through /proc/self/fd/<N>, so no path under a directory another user can write is '
    'resolved once the descriptors are open; only the files and the directory the run made (the same inodes) are '
    'removed')
DEVICES_MADE_SAFE_BY = (
    'each device is opened O_WRONLY|O_EXCL (the kernel refuses while it is mounted or held, and nothing can claim it '
    'while the run holds it) and re-identified from that descriptor (serial, wwid, size) before fio writes it '
    'through /proc/self/fd/<N>')


class ScratchError(Exception):
    """A directory, file or device the run refuses to use (the message says which and why)."""


class Unreachable(ScratchError):
    """A recorded directory that is not there now (its filesystem not mounted yet, say): its run is kept."""


# --- the owner of a run ----------------------------------------------------------------------------------------
def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def boot_id():
    return _read(BOOT_ID)


def process_owner(pid=None):
    """The owner of a run made by a process: {pid, start, boot_id}."""
    pid = os.getpid() if pid is None else pid
    return {'pid': pid, 'start': process_start(pid), 'boot_id': boot_id()}


def owner_alive(owner):
    """Whether the process or background job that made a run still runs (on this boot)."""
    if not isinstance(owner, dict) or owner.get('boot_id') != boot_id():
        return False
    if owner.get('session'):
        return fio_job.session_alive(owner)
    pid = owner.get('pid')
    return isinstance(pid, int) and owner.get('start') is not None and process_start(pid) == owner['start']


def check_state_dir(state_dir, option='state_dir'):
    """A module's state directory checked before the module does anything: the path
    (:func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store.check_dir_param`) and,
    when the directory exists, its record ``scratch`` readable (a damaged one would stop the run after it started,
    and the reaper could not follow it). Raises :class:`ScratchError` naming the option; returns whether the
    directory exists (a missing one is made on the first write)."""
    try:
        exists = state_store.check_dir_param(state_dir, option)
        if exists:
            state_store.read_record(state_dir, RECORD)
    except (state_store.StateError, OSError, ValueError) as exc:
        msg = str(exc)
        raise ScratchError(msg if msg.startswith(option + ':') else '%s: %s' % (option, msg))
    return exists


def current_run(state_dir):
    """The run id of the node's live run lease (the playbook run a module works for), None without one."""
    try:
        lease = state_store.lease_holder(state_dir)
    except (state_store.StateError, OSError, ValueError):
        return None
    return lease.get('run_id') if isinstance(lease, dict) else None


# --- directories ---------------------------------------------------------------------------------------------
def _writable_by(info):
    """Who other than root (and the module's user) can change entries of a directory: [] when nobody."""
    trusted = (0, os.geteuid())
    who = []
    if info.st_uid not in trusted:
        who.append('its owner uid %d' % info.st_uid)
    if info.st_mode & 0o020 and info.st_gid != 0:
        who.append('group gid %d' % info.st_gid)
    if info.st_mode & 0o002:
        who.append('everyone%s' % (' (sticky)' if info.st_mode & stat.S_ISVTX else ''))
    return who


def _component(path, info):
    return {'path': path, 'uid': info.st_uid, 'gid': info.st_gid, 'mode': '%04o' % stat.S_IMODE(info.st_mode),
            'writable_by': _writable_by(info)}


def _split(path):
    return [part for part in path.split('/') if part and part != '.']


def _join(parts):
    return '/' + '/'.join(parts)


class Target(object):
    """An open directory: ``fd``, the path as given, ``real`` (the path it was reached by), ``dev``/``ino`` and the
    components another user can write (``writable``)."""

    def __init__(self, path, real, fd, writable):
        self.path = path
        self.real = real
        self.fd = fd
        info = os.fstat(fd)
        self.dev, self.ino = info.st_dev, info.st_ino
        self.writable = writable

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def open_dir(path, what='directory'):
    """Open the directory ``path`` from ``/`` without following a symlink another user could have planted.

    A symlink met on the way is followed only when the directory holding it is writable by nobody but root (and
    the module's user); one in a directory another user can write is refused, and so is a component that is not a
    directory or was swapped between the look and the open. Returns a :class:`Target`; raises
    :class:`ScratchError` naming the path and the component.
    """
    if not isinstance(path, str) or not path.startswith('/'):
        raise ScratchError('%s: %r is not an absolute path' % (what, path))
    pending = _split(path)
    real = []
    links = 0
    fd = os.open('/', DIR_FLAGS)
    parents = [os.fstat(fd)]
    writable = []
    try:
        if _writable_by(parents[-1]):
            writable.append(_component('/', parents[-1]))
        while pending:
            part = pending.pop(0)
            here = _join(real)
            if part == '..':
                if real:
                    real.pop()
                    parents.pop()
                    os.close(fd)
                    fd = _reopen(real)
                continue
            try:
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    raise ScratchError('%s: %s does not exist%s' % (what, path, _where(path, real + [part], pending)))
                raise ScratchError('%s: %s: %s (%s)' % (what, path, os.strerror(exc.errno), _join(real + [part])))
            if stat.S_ISLNK(info.st_mode):
                who = _writable_by(parents[-1])
                if who:
                    raise ScratchError(
                        '%s: %s: %s is a symlink in %s, which %s can write: the collection never writes through a '
                        'path another user can redirect; give the real directory' % (
                            what, path, _join(real + [part]), here, ' and '.join(who)))
                links += 1
                if links > MAX_LINKS:
                    raise ScratchError('%s: %s: more than %d symlinks' % (what, path, MAX_LINKS))
                target = os.readlink(part, dir_fd=fd)
                if target.startswith('/'):
                    real = []
                    parents = parents[:1]
                    os.close(fd)
                    fd = os.open('/', DIR_FLAGS)
                pending = _split(target) + pending
                continue
            if not stat.S_ISDIR(info.st_mode):
                raise ScratchError('%s: %s is not a directory%s' % (what, path, _where(path, real + [part], pending)))
            try:
                child = os.open(part, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                raise ScratchError('%s: %s: %s changed while it was opened (%s); refusing' % (
                    what, path, _join(real + [part]), os.strerror(exc.errno)))
            opened = os.fstat(child)
            if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                os.close(child)
                raise ScratchError('%s: %s: %s was swapped while it was opened; refusing' % (
                    what, path, _join(real + [part])))
            os.close(fd)
            fd = child
            real.append(part)
            parents.append(opened)
            if _writable_by(opened):
                writable.append(_component(_join(real), opened))
    except BaseException:
        os.close(fd)
        raise
    return Target(path, _join(real), fd, writable)


def _where(path, parts, pending):
    """'' when ``parts`` is ``path`` itself, else which component on the way is meant."""
    return '' if not pending and _join(parts) == _join(_split(path)) else ' (at %s)' % _join(parts)


def _reopen(parts):
    """Re-open a path of plain directories (no symlink followed) from ``/``."""
    fd = os.open('/', DIR_FLAGS)
    for part in parts:
        try:
            child = os.open(part, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


def open_real(path, flags=os.O_RDONLY):
    """Open a real path (symlinks already resolved, as os.path.realpath gives it) with no symlink followed at any
    component: each directory from ``/`` and the last component with ``O_NOFOLLOW``. A component swapped for a link
    after the path was resolved fails the open (OSError, ELOOP or ENOTDIR) instead of leading elsewhere."""
    parts = _split(path)
    if not parts:
        raise OSError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    fd = _reopen(parts[:-1])
    try:
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    finally:
        os.close(fd)


# A recorded directory that cannot be reached now for these reasons is kept for a later run: not there (its
# filesystem not mounted yet), or its filesystem failed (a drive gone from its array: XFS shut down, EIO).
UNREACHABLE_ERRNOS = (errno.ENOENT, errno.EIO, errno.ENXIO, errno.ENODEV, errno.ESTALE)


def reopen_dir(path, dev=None, ino=None):
    """Open a recorded real directory path again (no symlink followed at all), checking its dev/ino when given.

    Raises :class:`Unreachable` (the run stays recorded) where the path is missing, its filesystem fails, or
    another filesystem is there now (the recorded one not mounted: a directory of the filesystem below the mount
    point); :class:`ScratchError` where a symlink is in the way or the same filesystem holds another directory
    there (renamed or replaced)."""
    try:
        fd = _reopen(_split(path))
    except OSError as exc:
        kind = Unreachable if exc.errno in UNREACHABLE_ERRNOS else ScratchError
        raise kind('%s: cannot be reached without following a symlink any more (%s)'
                   % (path, os.strerror(exc.errno)))
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise Unreachable('%s: %s' % (path, os.strerror(exc.errno)))
    if dev is not None and info.st_dev != dev:
        os.close(fd)
        raise Unreachable('%s is on another filesystem than when the run started (device %d:%d, not %d:%d): its '
                          'filesystem is not mounted there now' % (path, os.major(info.st_dev), os.minor(info.st_dev),
                                                                   os.major(dev), os.minor(dev)))
    if dev is not None and info.st_ino != ino:
        os.close(fd)
        raise ScratchError('%s is not the directory it was when the run started (renamed or replaced)' % path)
    return fd


# --- the run directory ----------------------------------------------------------------------------------------
def run_name(label):
    tag = re.sub(r'[^A-Za-z0-9_-]', '_', label or 'run')[:32]
    return '%s%s.%s' % (RUN_PREFIX, tag, binascii.hexlify(os.urandom(6)).decode('ascii'))


def _update(state_dir, writer, change):
    """Change the ``scratch`` record's runs ({run key: entry}) under the store's lock."""
    def apply(old):
        runs = dict(old or {})
        change(runs)
        return runs or None
    try:
        state_store.update(state_dir, RECORD, apply, writer=writer)
    except (state_store.StateError, OSError, ValueError) as exc:
        raise ScratchError('cannot record the run in the state store %s: %s' % (state_dir, exc))


def _key(entry):
    return '%s/%s' % (entry['parent'].rstrip('/'), entry['name'])


class RunDir(object):
    """A directory made for one run, with the files made in it (their descriptors open until :meth:`close`)."""

    def __init__(self, target, label, state_dir, writer):
        self.target = target
        self.label = label
        self.name = run_name(label)
        self.swapped = []
        self.state_dir = state_dir
        self.writer = writer
        self.fd = None
        self.dev = self.ino = None
        self.files = {}
        self.order = []
        self.done = False
        self.key = '%s/%s' % (target.real.rstrip('/'), self.name)

    @property
    def path(self):
        return self.key

    def file_path(self, name):
        """Where a file of the run is (for reports: nothing opens this path)."""
        return '%s/%s' % (self.key, name)

    def fio_file(self, name):
        """The name fio opens: the descriptor the module holds, inherited by fio (``pass_fds``)."""
        return '/proc/self/fd/%d' % self.files[name]['fd']

    def fds(self):
        return [self.files[name]['fd'] for name in self.order if self.files[name]['fd'] is not None]

    def allocated(self):
        """Bytes allocated to the run's files so far (st_blocks, read from the descriptors)."""
        total = 0
        for name in self.order:
            fd = self.files[name]['fd']
            if fd is not None:
                try:
                    total += min(os.fstat(fd).st_blocks * 512, self.files[name]['size'])
                except OSError:
                    pass
        return total

    def set_owner(self, owner):
        """Hand the run to another owner (a background job), if it is still recorded."""
        def change(runs):
            if self.key in runs:
                runs[self.key] = dict(runs[self.key], owner=owner)
        _update(self.state_dir, self.writer, change)

    def _make_dir(self, files, owner, run_id):
        """Record, mkdir and open the run directory. A user who owns the parent may rename it away (and plant
        something under its name) between the mkdir and the open: then it is left where they put it (empty, owned
        by root, mode 0700: never a place anything is written), listed in ``swapped``, and a new name is tried."""
        for _attempt in range(MAKE_ATTEMPTS):
            entry = {'parent': self.target.real, 'parent_dev': self.target.dev, 'parent_ino': self.target.ino,
                     'name': self.name, 'dev': None, 'ino': None, 'uid': os.geteuid(),
                     'files': dict((name, None) for name, _size in files), 'owner': owner, 'run_id': run_id,
                     'writer': self.writer, 'created_at': state_store.utc_now()}
            # Recorded first: a run killed at any point below leaves a record the reaper can follow.
            _update(self.state_dir, self.writer, lambda runs: runs.__setitem__(self.key, entry))
            try:
                os.mkdir(self.name, 0o700, dir_fd=self.target.fd)
            except OSError as exc:
                raise ScratchError('cannot make the run directory %s: %s' % (self.key, os.strerror(exc.errno)))
            try:
                fd = os.open(self.name, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=self.target.fd)
            except OSError:
                fd = None
            info = os.fstat(fd) if fd is not None else None
            # Only root could have made a root-owned directory there; an empty one is this run's (or an earlier
            # attempt's, renamed back by the user).
            if info is not None and info.st_uid == os.geteuid() and stat.S_ISDIR(info.st_mode) and not os.listdir(fd):
                self.fd = fd
                return info
            if fd is not None:
                os.close(fd)
            self.swapped.append(self.key)
            _update(self.state_dir, self.writer, lambda runs, key=self.key: runs.pop(key, None))
            self.name = run_name(self.label)
            self.key = '%s/%s' % (self.target.real.rstrip('/'), self.name)
        raise ScratchError('the run directory in %s was renamed away right after it was made, %d times (%s): another '
                           'user is racing the run; refusing' % (self.target.real, MAKE_ATTEMPTS,
                                                                 ', '.join(self.swapped)))

    def _make(self, files, owner, run_id):
        info = self._make_dir(files, owner, run_id)
        os.fchmod(self.fd, 0o700)
        self.dev, self.ino = info.st_dev, info.st_ino
        made = {}
        for name, size in files:
            fd = os.open(name, FILE_FLAGS, 0o600, dir_fd=self.fd)
            self.files[name] = {'fd': fd, 'size': size}
            self.order.append(name)
            os.ftruncate(fd, size)
            st = os.fstat(fd)
            made[name] = {'dev': st.st_dev, 'ino': st.st_ino}
            self.files[name].update(made[name])

        def created(runs):
            if self.key in runs:
                runs[self.key] = dict(runs[self.key], dev=self.dev, ino=self.ino, files=made)
        _update(self.state_dir, self.writer, created)

    def close(self):
        """Close the files' descriptors (the files stay until :meth:`cleanup`)."""
        for name in self.order:
            fd = self.files[name].get('fd')
            if fd is not None:
                os.close(fd)
                self.files[name]['fd'] = None

    def release(self):
        """Close every descriptor and leave the run as it is (recorded): another process (a background worker
        that holds the same descriptors) removes it."""
        self.close()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self.target.close()
        self.done = True

    def cleanup(self, keep=False):
        """Remove the run's files and directory (``keep``: leave them, only forget the record). Returns the paths
        kept (``keep``) or left because they were no longer the run's own (listed, never removed). Once only."""
        if self.done:
            return []
        self.done = True
        self.close()
        left = []
        forget = keep
        try:
            if keep:
                return [self.file_path(name) for name in self.order]
            if self.fd is not None:
                left = _remove_files(self.fd, dict((n, self.files[n]) for n in self.order if 'ino' in self.files[n]))
                left = [self.file_path(name) for name in left]
                os.close(self.fd)
                self.fd = None
                if self.ino is not None and not _remove_dir(self.target.fd, self.name, self.dev, self.ino):
                    left.append(self.key)
            durable(self.target.fd)
            forget = True
        except OSError as exc:
            left.append('%s: %s; kept in the record, a later run removes it' % (self.key, os.strerror(exc.errno)))
        finally:
            # The record goes only once the removal is on disk: a filesystem that failed under the run (a drive
            # gone from its array, I/O errors) may lose the removal at the next mount, and the record is what
            # lets a later run (the reaper) find the directory again.
            if forget:
                _update(self.state_dir, self.writer, lambda runs: runs.pop(self.key, None))
            self.target.close()
        return left

    def safety(self):
        return safety([self.target], [self])


def create(target, label, files, state_dir, owner=None, run_id=None, writer='checkpoint_io'):
    """Make a run directory in the open ``target`` with ``files`` [(name, size in bytes)]; a :class:`RunDir`.

    The run is recorded in ``state_dir`` first (record ``scratch``), with ``owner`` (default: this process) and
    ``run_id`` (the lease's run). Anything made before a failure is removed again.
    """
    run = RunDir(target, label, state_dir, writer)
    try:
        run._make(files, owner or process_owner(), run_id)
    except ScratchError:
        run.cleanup()
        raise
    except OSError as exc:
        run.cleanup()
        raise ScratchError('cannot make the run\'s files in %s: %s' % (run.key, os.strerror(exc.errno)))
    return run


def durable(dir_fd):
    """fsync a directory: the entries removed from it are on disk (raises OSError where they may not be)."""
    os.fsync(dir_fd)


def _same(info, want):
    return want is not None and (info.st_dev, info.st_ino) == (want.get('dev'), want.get('ino'))


def _remove_files(dir_fd, files):
    """Unlink each named file whose inode is the recorded one; the names left (not the run's own any more)."""
    left = []
    for name, want in sorted(files.items()):
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if _same(info, want) and stat.S_ISREG(info.st_mode):
            os.unlink(name, dir_fd=dir_fd)
        else:
            left.append(name)
    return left


def _find(parent_fd, name, dev, ino):
    """The name the directory dev/ino has in ``parent_fd``: ``name`` when still there, else found by inode (a
    user may rename it in a directory they own; they cannot move it out). None when it is not there."""
    for _attempt in range(3):
        try:
            if _same(os.stat(name, dir_fd=parent_fd, follow_symlinks=False), {'dev': dev, 'ino': ino}):
                return name
        except OSError:
            pass
        for entry in os.listdir(parent_fd):
            try:
                if _same(os.stat(entry, dir_fd=parent_fd, follow_symlinks=False), {'dev': dev, 'ino': ino}):
                    return entry
            except OSError:
                continue
    return None


def _remove_dir(parent_fd, name, dev, ino, attempts=20):
    """rmdir the run directory dev/ino (found under ``name`` or by inode); False when it cannot be found or is
    not empty. Renamed away between the look and the rmdir (a user's rename in their directory): looked for again.
    What stays is a window of microseconds between the look and the rmdir, in which only a user who swaps an empty
    directory of their own in under the run directory's unique name would see that directory removed."""
    for _attempt in range(attempts):
        found = _find(parent_fd, name, dev, ino)
        if found is None:
            return False
        try:
            os.rmdir(found, dir_fd=parent_fd)
            return True
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                return False
    return False


def safety(targets, runs=()):
    """What the module returns about where it wrote: the components another user can write, how the run is made
    safe despite them, and the run directories another user renamed away right after they were made (left empty
    where that user put them)."""
    return {'writable_components': [dict(c, directory=t.path) for t in targets for c in t.writable],
            'run_dirs': [run.path for run in runs],
            'swapped_run_dirs': [key for run in runs for key in run.swapped],
            'made_safe_by': MADE_SAFE_BY % os.geteuid()}


# --- raw block devices ---------------------------------------------------------------------------------------------
def open_devices(expected):
    """Open ``expected`` [{name, wwid, serial, size_bytes}] ``O_WRONLY|O_EXCL`` and re-identify each from its
    descriptor; {name: fd}. Raises :class:`ScratchError` (nothing stays open) naming the device."""
    fds = {}
    try:
        for entry in expected:
            name = entry['name']
            try:
                fd = os.open('/dev/' + name, os.O_WRONLY | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW)
            except OSError as exc:
                raise ScratchError('/dev/%s cannot be opened exclusively: %s%s' % (
                    name, os.strerror(exc.errno),
                    ' (mounted, or held by md, LVM or another program)' if exc.errno == errno.EBUSY else ''))
            fds[name] = fd
            try:
                identity.verify_fd(fd, entry)
            except identity.IdentityError as exc:
                raise ScratchError(str(exc))
    except ScratchError:
        for fd in fds.values():
            os.close(fd)
        raise
    return fds


def device_safety():
    return {'writable_components': [], 'run_dirs': [], 'made_safe_by': DEVICES_MADE_SAFE_BY}
