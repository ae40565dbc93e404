# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A user's config file that root rewrites (a DeepSpeed ds_config): read and replaced without ever following a link.

The modules run as root; a training job's ds_config usually sits in a directory its user owns, who can swap any
name in it at any moment. So :func:`open_config`:

* opens the file's directory from ``/`` with
  :func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.scratch.open_dir` (a symlink on the way
  is followed only where no other user could have planted it) and keeps its descriptor;
* refuses a file that is a symlink unless asked to follow it (``follow_symlinks``; the message names the link and
  its target), and even then one a user could have planted that leads to a file that user does not own; refuses
  anything but a regular file with one link; refuses a missing file unless asked to create it (``create``);
* refuses a path with a component that someone other than root and the file's owner can write (another user, a
  shared group, everyone - a sticky directory such as /tmp only above the file's own directory): the config the
  training job reads could be swapped behind the run;
* reads the file through a descriptor opened ``O_NOFOLLOW`` in that directory.

:meth:`ConfigFile.write` replaces it through the collection's one atomic writer on ``/proc/self/fd/<dir>/<name>``
(a new file made ``O_EXCL`` in the same directory, renamed over the name: a link planted at the name is replaced,
never written through), with the old file's owner, group and mode; :meth:`ConfigFile.backup` writes the old bytes
beside it the same way. Standard library only, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import grp
import os
import posixpath
import pwd
import stat
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import write_atomic
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.scratch import ScratchError, open_dir

MAX_BYTES = 16 * 1024 * 1024
MAX_LINKS = 40
NEW_DIR_MODE = 0o755
NEW_FILE_MODE = 0o644
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
MADE_SAFE_BY = (
    'the file is read through a descriptor of its directory (opened from / without following a symlink a user could '
    'plant) and replaced by a new file made O_EXCL in that directory and renamed over its name, never written '
    'through it: a user who can write %s (the file\'s owner) cannot redirect the write')
_KINDS = ((stat.S_ISDIR, 'a directory'), (stat.S_ISLNK, 'a symlink'), (stat.S_ISFIFO, 'a FIFO'),
          (stat.S_ISSOCK, 'a socket'), (stat.S_ISBLK, 'a block device'), (stat.S_ISCHR, 'a character device'))


class ConfigFileError(Exception):
    """A config file the module refuses to read or rewrite (the message names the path and why)."""


def kind(mode):
    """'a directory', 'a symlink', ... for a mode that is not a regular file."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return 'not a regular file'


def _user(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return 'uid %d' % uid


def _private_group(gid, uid):
    """Whether group ``gid`` is ``uid``'s own: its primary group with no other member."""
    try:
        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return user.pw_gid == gid and set(group.gr_mem) <= set([user.pw_name])


def other_writers(component, owner, own_dir=False):
    """Who other than root, the module's user and ``owner`` (the one other user the path may belong to) can change
    entries of a directory ``component`` (the dict
    :func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.scratch.open_dir` reports). A
    world-writable sticky directory counts only as the file's own directory (``own_dir``)."""
    mode = int(component['mode'], 8)
    who = []
    if component['uid'] not in (0, os.geteuid(), owner):
        who.append('its owner %s' % _user(component['uid']))
    if mode & 0o020 and component['gid'] != 0 and not _private_group(component['gid'], owner):
        who.append('group gid %d' % component['gid'])
    if mode & 0o002 and (own_dir or not mode & stat.S_ISVTX):
        who.append('everyone')
    return who


class ConfigFile(object):
    """An open config file: ``path`` as given, ``real`` (the file reached, after a followed link), ``link``
    ({path, target} of a followed symlink, or None), ``exists``, ``data`` (bytes read), ``owner`` (uid of the file,
    unless root's, else of its directory: the one user besides root the path may belong to), ``writable``
    (components its owner can write: the run is made safe against them, see :data:`MADE_SAFE_BY`),
    ``missing_dirs`` (directories ``create`` will make)."""

    def __init__(self, path, directory, name, missing_dirs=()):
        self.path = path
        self.dir = directory
        self.name = name
        self.missing_dirs = list(missing_dirs)
        self.real = posixpath.join(directory.real, *(self.missing_dirs + [name]))
        self.link = None
        self.exists = False
        self.data = None
        self.info = None
        self.owner = os.fstat(directory.fd).st_uid
        self.writable = []

    @property
    def text(self):
        return None if self.data is None else self.data.decode('utf-8')

    def close(self):
        self.dir.close()

    def safety(self):
        """What the results say about the path's components another user can write."""
        paths = [component['path'] for component in self.writable]
        return {'writable_components': self.writable,
                'made_safe_by': (MADE_SAFE_BY % ', '.join(paths)) if paths else None}

    def _dir_fd(self):
        """The descriptor of the file's directory, making the missing directories first (``create``)."""
        fd = self.dir.fd
        for part in self.missing_dirs:
            try:
                os.mkdir(part, NEW_DIR_MODE, dir_fd=fd)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise ConfigFileError('%s: cannot make the directory %s: %s' % (self.path, part,
                                                                                    os.strerror(exc.errno)))
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            if fd != self.dir.fd:
                os.close(fd)
            fd = child
        if fd != self.dir.fd:
            os.close(self.dir.fd)
            self.dir.fd = fd
            self.missing_dirs = []
        return fd

    def _put(self, name, data, mode):
        """``data`` at ``name`` in the directory, through the one atomic writer (owner and group of the file)."""
        fd = self._dir_fd()
        info = self.info
        # owner and group set on the new file's descriptor, never by name (a hard link swapped in for the
        # temporary name in the user's directory would take them)
        owner = (info.st_uid, info.st_gid) if info is not None else None
        write_atomic('/proc/self/fd/%d/%s' % (fd, name), data, mode=mode, owner=owner)

    def backup(self, now=None):
        """Copy the bytes read to ``<name>.<pid>.<date>@<time>~`` beside the file (as Ansible's backup_local names
        it; ``.1``, ``.2`` ... before the ``~`` when taken); returns the backup's path."""
        stamp = time.strftime('%Y-%m-%d@%H:%M:%S', time.localtime(now))
        for number in range(100):
            name = '%s.%d.%s%s~' % (self.name, os.getpid(), stamp, '.%d' % number if number else '')
            try:
                os.stat(name, dir_fd=self.dir.fd, follow_symlinks=False)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise
                self._put(name, self.data, stat.S_IMODE(self.info.st_mode))
                return posixpath.join(posixpath.dirname(self.real), name)
        raise ConfigFileError('%s: no free backup name beside it (%s.%d.%s~ and 99 more are taken); nothing was '
                              'written' % (self.path, self.name, os.getpid(), stamp))

    def write(self, text):
        """Replace the file with ``text`` (its mode, owner and group kept; a new file: root, 0644)."""
        self._put(self.name, text, stat.S_IMODE(self.info.st_mode) if self.info is not None else NEW_FILE_MODE)

    def read_back(self):
        """The text now at the name (opened O_NOFOLLOW in the directory)."""
        data, _info = _read(self._dir_fd(), self.name, self.path)
        return data.decode('utf-8')

    def remove(self):
        """Remove the file, if the name still holds the file read (same inode)."""
        try:
            info = os.stat(self.name, dir_fd=self.dir.fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return False
            raise
        if self.info is None or (info.st_dev, info.st_ino) != (self.info.st_dev, self.info.st_ino):
            raise ConfigFileError('%s changed since it was read (another file is at its name now); it was not '
                                  'removed' % self.path)
        os.unlink(self.name, dir_fd=self.dir.fd)
        return True


def _read(dir_fd, name, path):
    """(bytes, stat) of the regular file ``name`` in ``dir_fd``; ConfigFileError otherwise."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigFileError('%s became a symlink while it was read; refusing' % path)
        raise ConfigFileError('cannot read %s: %s' % (path, os.strerror(exc.errno)))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigFileError('%s is %s, not a regular file' % (path, kind(info.st_mode)))
        if info.st_nlink != 1:
            raise ConfigFileError('%s has %d hard links: the file may be reached by other names, a rewrite would '
                                  'leave them behind; refusing (make it a single file)' % (path, info.st_nlink))
        if info.st_size > MAX_BYTES:
            raise ConfigFileError('%s is %d bytes, more than the %d bytes a config file may be' % (
                path, info.st_size, MAX_BYTES))
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        data = b''.join(chunks)
    finally:
        os.close(fd)
    try:
        data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise ConfigFileError('%s is not UTF-8 text (byte %d): refusing to rewrite it' % (path, exc.start))
    return data, info


def _existing_dir(path, what):
    """(open Target of the deepest existing directory above ``path``, the missing names below it)."""
    missing = []
    current = path
    while current != '/' and not os.path.lexists(current):
        missing.insert(0, posixpath.basename(current))
        current = posixpath.dirname(current)
    try:
        return open_dir(current, what), missing
    except ScratchError as exc:
        raise ConfigFileError(str(exc))


def open_config(path, follow_symlinks=False, create=False, what='config file', options=None, _links=0):
    """Open the config file ``path`` for a rewrite (see the module docstring); :class:`ConfigFile` or
    :class:`ConfigFileError`. ``options`` names the two options in messages ({'follow_symlinks': ...,
    'create': ...})."""
    options = dict({'follow_symlinks': 'follow_symlinks', 'create': 'create'}, **(options or {}))
    if not isinstance(path, str) or not path.startswith('/'):
        raise ConfigFileError('%s: %r is not an absolute path' % (what, path))
    parent, name = posixpath.split(posixpath.normpath(path))
    if not name or path.endswith('/') or path.endswith('/.') or path.endswith('/..'):
        raise ConfigFileError('%s: %s names a directory, not a file' % (what, path))
    if create and not os.path.lexists(parent):
        directory, missing = _existing_dir(parent, what)
        if [component for component in directory.writable
                if other_writers(component, 0, own_dir=component['path'] == directory.real)]:
            directory.close()
            raise ConfigFileError('%s %s: its directory %s does not exist and %s can be written by a user other than '
                                  'root; create the directory first' % (what, path, parent, directory.real))
    else:
        try:
            directory, missing = open_dir(parent, what), []
        except ScratchError as exc:
            if 'does not exist' in str(exc):
                raise ConfigFileError('%s %s does not exist, nor its directory %s: check the path (a mistyped name is '
                                      'not created); set %s: true to create it and the directory'
                                      % (what, path, parent, options['create']))
            raise ConfigFileError(str(exc))
    config = ConfigFile(path, directory, name, missing)
    try:
        _open(config, follow_symlinks, create, what, options, _links)
    except BaseException:
        config.close()
        raise
    return config


def _follow(config, target, what, options, links):
    """Open what the symlink at ``config``'s name points to (it becomes the file of ``config``)."""
    resolved = posixpath.normpath(posixpath.join(config.dir.real, target))
    if links >= MAX_LINKS:
        raise ConfigFileError('%s %s: more than %d symlinks' % (what, config.path, MAX_LINKS))
    final = open_config(resolved, True, False, what, options, links + 1)
    link_dir = config.dir
    config.dir, config.name, config.real = final.dir, final.name, final.real
    config.exists, config.data, config.info, config.owner = final.exists, final.data, final.info, final.owner
    config.missing_dirs = final.missing_dirs
    config.link = {'path': config.path, 'target': target}
    return link_dir, final.writable


def _open(config, follow_symlinks, create, what, options, links):
    path, directory, name = config.path, config.dir, config.name
    info = None
    if not config.missing_dirs:
        try:
            info = os.stat(name, dir_fd=directory.fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise ConfigFileError('cannot look at %s %s: %s' % (what, path, os.strerror(exc.errno)))
    writable = []
    if info is not None and stat.S_ISLNK(info.st_mode):
        target = os.readlink(name, dir_fd=directory.fd)
        if not follow_symlinks:
            raise ConfigFileError('%s %s is a symlink to %s (%s): the collection never writes through a link; set '
                                  '%s: true to tune the file it points to, or name that file' % (
                                      what, path, target, posixpath.normpath(posixpath.join(directory.real, target)),
                                      options['follow_symlinks']))
        # From here the link's directory is checked against the owner of the file it leads to: a link a user could
        # plant is followed only to that user's own files.
        directory, writable = _follow(config, target, what, options, links)
    elif info is None:
        if not create:
            raise ConfigFileError('%s %s does not exist: check the path (a mistyped name is not created); set %s: '
                                  'true to create it' % (what, path, options['create']))
    elif not stat.S_ISREG(info.st_mode):
        raise ConfigFileError('%s %s is %s, not a regular file' % (what, path, kind(info.st_mode)))
    else:
        config.data, config.info = _read(directory.fd, name, path)
        if (config.info.st_dev, config.info.st_ino) != (info.st_dev, info.st_ino):
            raise ConfigFileError('%s %s was swapped while it was opened; refusing' % (what, path))
        config.exists = True
        if config.info.st_uid not in (0, os.geteuid()):
            config.owner = config.info.st_uid
    found = []
    for component in directory.writable:
        who = other_writers(component, config.owner, own_dir=component['path'] == directory.real)
        if who:
            found.append('%s (owner %s, mode %s) can be written by %s' % (
                component['path'], _user(component['uid']), component['mode'], ' and '.join(who)))
    if config.link is not None:
        directory.close()
    if found:
        raise ConfigFileError('%s %s: %s, not only by root and %s (who owns %s): another user could swap the '
                              'config the training job reads; fix the permissions (chmod o-w, g-w, chown) or move '
                              'the file' % (what, path, '; '.join(found), _user(config.owner), config.real))
    config.writable = writable + [component for component in directory.writable if component not in writable]
