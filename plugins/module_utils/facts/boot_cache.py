# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the facts learn once a boot: a tool's answer that does not change until the node reboots or the tool is
replaced (the io_uring probe, fio's and nvme-cli's versions), kept in ``<run_root>/checkpoint_io/<name>.json`` (the
tmpfs /run, emptied at boot) with the key it holds for. The directory is root's, 0700, refused when it is not ours
or others could write it (state_store.check_dir); the files are 0600, read without following a link and written
atomically, outside check mode only. Anything unexpected is no cache: the tool runs, as it would without one."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import write_json_atomic
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import (
    StateError,
    check_dir,
    loads_strict,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import read_str

DIRECTORY = 'checkpoint_io'
MAX_BYTES = 65536


def key_for(ctx, tool_path, *extra):
    """What a tool's answer depends on: the boot, the tool's file (device, inode, size, mtime), the user it runs as,
    and ``extra``; None where the boot or the file is not known (no cache then)."""
    boot_id = read_str(ctx.proc('sys', 'kernel', 'random', 'boot_id'))
    try:
        st = os.stat(tool_path)
    except (OSError, TypeError):
        return None
    if not boot_id:
        return None
    return [boot_id, tool_path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, os.geteuid()] + list(extra)


def read(ctx, name, key):
    """The document kept under ``name`` for ``key``, or None."""
    if not ctx.run_root or key is None:
        return None
    directory = os.path.join(ctx.run_root, DIRECTORY)
    try:
        if not check_dir(directory):
            return None
        fd = os.open(os.path.join(directory, name + '.json'), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, 'rb') as handle:
            doc = loads_strict(handle.read(MAX_BYTES).decode('utf-8'))
    except (OSError, ValueError, StateError):
        return None
    if not isinstance(doc, dict) or doc.get('key') != key:
        return None
    return doc


def write(ctx, name, key, doc):
    """Keep ``doc`` under ``name`` for ``key`` (best effort: a node whose /run cannot take it asks the tool again)."""
    if not ctx.run_root or key is None or ctx.check_mode:
        return
    directory = os.path.join(ctx.run_root, DIRECTORY)
    try:
        if not check_dir(directory):
            os.mkdir(directory, 0o700)
            check_dir(directory)
        write_json_atomic(os.path.join(directory, name + '.json'), dict(doc, key=key), mode=0o600, fsync=False)
    except (OSError, StateError):
        return
