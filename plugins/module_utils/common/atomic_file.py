# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one atomic writer: a file is replaced whole or not at all.

Every file the collection writes on a node (state records, mdadm.conf, a ds_config, a background job's progress)
goes through :func:`write_atomic`: the bytes go to a new temporary file made with O_EXCL in the destination's own
directory (never through an existing path, so a symlink planted at the destination is replaced, not followed),
are flushed and fsynced, and the temporary file is renamed over the destination; the directory is fsynced so the
rename survives a power cut. A reader sees the old file or the new one, never half of one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json
import os
import tempfile


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_output(path, mode=0o644, fsync=True, mover=None, owner=None, binary=False, newline=None):
    """A handle on a new temporary file beside ``path`` (O_EXCL, a random name) that replaces ``path`` when the
    block ends without an exception, and is removed when it raises: for writers that stream (the fleet report).

    mode and owner ((uid, gid) or None) are set on the descriptor before the rename, never by name: in a directory
    another user can write, the temporary name could be a link to another file by then.
    mover: a callable (tmp, path) doing the final move instead of os.rename - AnsibleModule.atomic_move, which keeps
    an existing destination's SELinux context.
    """
    directory = os.path.dirname(path) or '.'
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=directory)
    try:
        if binary:
            handle = os.fdopen(fd, 'wb')
        else:
            handle = os.fdopen(fd, 'w', encoding='utf-8', newline=newline)
        with handle:
            yield handle
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            if owner is not None:
                os.fchown(handle.fileno(), owner[0], owner[1])
            if fsync:
                os.fsync(handle.fileno())
        (mover or os.rename)(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if fsync:
        _fsync_dir(directory)


def write_atomic(path, data, mode=0o644, fsync=True, mover=None, keep_mode=False, owner=None):
    """Replace ``path`` with ``data`` (bytes or text).

    mode: the new file's mode; with keep_mode, an existing regular destination's mode wins.
    owner: (uid, gid) of the new file, set on its descriptor (a user's ds_config stays the user's), or None.
    mover: as :func:`atomic_output`.
    """
    if not isinstance(data, bytes):
        data = data.encode('utf-8')
    if keep_mode:
        try:
            st = os.lstat(path)
            if not os.path.islink(path):
                mode = st.st_mode & 0o7777
        except OSError:
            pass
    with atomic_output(path, mode=mode, fsync=fsync, mover=mover, owner=owner, binary=True) as handle:
        handle.write(data)


def write_json_atomic(path, doc, mode=0o644, fsync=True, pretty=True):
    """:func:`write_atomic` of a JSON document (sorted keys; indented unless pretty=False)."""
    if pretty:
        text = json.dumps(doc, indent=2, sort_keys=True) + '\n'
    else:
        text = json.dumps(doc, sort_keys=True)
    write_atomic(path, text, mode=mode, fsync=fsync)
