# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A directory for the training user below a root-owned base, made as root without a path the user can steer.

The checkpoint directory lies below the volume's mount point (``/mnt/checkpoints/team/job``) and belongs to the
training user. Made by name (``ansible.builtin.file``), every directory on the way got that owner, so the user could
replace ``job`` with a link to ``/etc`` and the next run chowned ``/etc``. Here the base is opened from ``/``
(:func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.scratch.open_dir`) and every component
below it by descriptor with ``O_NOFOLLOW``: a directory on the way is made root's (mode 0755) and an existing one
must be root's and writable by nobody else (or the user could swap what is below it); the last component is made
with ``mkdirat`` and its owner and mode set on its descriptor (``fchown``/``fchmod``), never by name. A symlink
anywhere below the base is refused.

Standard library only, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import stat

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
PARENT_MODE = 0o755


class OwnedDirError(Exception):
    pass


def components(base, path):
    """The components of ``path`` below ``base`` (both absolute, normalised); OwnedDirError when it is not below."""
    for what, value in (('base', base), ('path', path)):
        if not isinstance(value, str) or not value.startswith('/') or '\x00' in value:
            raise OwnedDirError('%s: %r is not an absolute path' % (what, value))
    parts = [p for p in path.split('/') if p]
    if '..' in parts or '.' in parts:
        raise OwnedDirError('path: %r holds . or ..; give the directory itself' % path)
    base_parts = [p for p in base.split('/') if p]
    if parts[:len(base_parts)] != base_parts:
        raise OwnedDirError('path: %r is neither base %r nor below it' % (path, base))
    return parts[len(base_parts):]


def _state(info):
    return {'uid': info.st_uid, 'gid': info.st_gid, 'mode': '%04o' % stat.S_IMODE(info.st_mode)}


def _parent_problem(where, info):
    if info.st_uid != 0:
        return ('%s belongs to uid %d: a directory on the way to the checkpoint directory must be root\'s, or its '
                'owner could replace what is below it with a link (the next run would hand the link\'s target to '
                'the training user); make it root\'s (chown root) or put the checkpoint directory one level higher'
                % (where, info.st_uid))
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
        return ('%s is writable by its group or every user (mode %04o) without the sticky bit: others could replace '
                'what is below it; chmod go-w it' % (where, stat.S_IMODE(info.st_mode)))
    return None


def ensure(base, path, uid, gid, mode, check_mode=False):
    """Make or correct ``path`` (below ``base``) as the directory of ``uid``:``gid`` with ``mode``.

    Returns {changed, created (the directories made, root's on the way and the last), before, after}; before is
    None where the directory did not exist. Raises OwnedDirError naming the component for a symlink, a component
    that is not a directory, or a directory on the way another user owns or can write."""
    parts = components(base, path)
    try:
        target = scratch.open_dir(base, 'base')
    except scratch.ScratchError as exc:
        raise OwnedDirError(str(exc))
    fd = target.fd
    created, here = [], target.real.rstrip('/') or ''
    try:
        if not parts:  # the base itself (the volume's root directory)
            return _set(fd, os.fstat(fd), None, [], uid, gid, mode, check_mode)
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            where = here + '/' + part
            try:
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise OwnedDirError('%s: %s' % (where, os.strerror(exc.errno)))
                info = None
            if info is not None and stat.S_ISLNK(info.st_mode):
                raise OwnedDirError('%s is a symlink: the collection never makes or changes a directory through a '
                                    'link (one planted there would hand its target to the training user); remove '
                                    'it' % where)
            if info is not None and not stat.S_ISDIR(info.st_mode):
                raise OwnedDirError('%s exists and is not a directory' % where)
            if info is None:
                created.append(where)
                if check_mode:
                    # nothing below a directory that does not exist yet can be looked at
                    os.close(fd)
                    fd = -1
                    return {'changed': True, 'created': created + [here + '/' + '/'.join(parts[:j + 1])
                                                                   for j in range(index + 1, len(parts))],
                            'before': None, 'after': {'uid': uid, 'gid': gid, 'mode': '%04o' % mode}}
                os.mkdir(part, 0o700, dir_fd=fd)  # closed until its owner and mode are set by descriptor
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise OwnedDirError('%s changed while it was opened (%s); refusing' % (where, os.strerror(exc.errno)))
            os.close(fd)
            fd = child
            opened = os.fstat(fd)
            if info is not None and (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                raise OwnedDirError('%s was swapped while it was opened; refusing' % where)
            here = where
            if not last:
                if info is None:
                    os.fchown(fd, 0, 0)
                    os.fchmod(fd, PARENT_MODE)
                else:
                    problem = _parent_problem(where, opened)
                    if problem:
                        raise OwnedDirError(problem)
                continue
            return _set(fd, opened, info, created, uid, gid, mode, check_mode)
    finally:
        if fd >= 0:
            os.close(fd)
    raise OwnedDirError('path: %r has no component below %r' % (path, base))


def _set(fd, opened, info, created, uid, gid, mode, check_mode):
    """Owner, group and mode of the open directory ``fd``, by descriptor."""
    before = None if info is None and created else _state(opened)
    want = {'uid': uid, 'gid': gid, 'mode': '%04o' % mode}
    changed = before != want
    if changed and not check_mode:
        if (opened.st_uid, opened.st_gid) != (uid, gid):
            os.fchown(fd, uid, gid)
        os.fchmod(fd, mode)
    return {'changed': changed or bool(created), 'created': created, 'before': before, 'after': want}
