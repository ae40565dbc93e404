# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a dead run left: the run directories and raw devices of runs whose owner died (or the run of a stopped job),
found through the state-store record ``scratch``, their fio processes stopped and their files removed by inode
(:mod:`scratch` made them). Called by ``checkpoint_job reap`` from the preflight role once it holds the lease."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import signal
import stat
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import fio_job
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import process_start
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.scratch import (
    DIR_FLAGS,
    RECORD,
    ScratchError,
    Unreachable,
    _find,
    _key,
    _remove_dir,
    _remove_files,
    _same,
    _update,
    durable,
    owner_alive,
    reopen_dir,
)


# --- what a dead run left --------------------------------------------------------------------------------------------
def holders(inodes, procfs_root='/proc'):
    """Pids (not this one) holding one of ``inodes`` {(dev, ino)} open."""
    found = set()
    me = os.getpid()
    for name in os.listdir(procfs_root):
        if not name.isdigit() or int(name) == me:
            continue
        base = '%s/%s/fd' % (procfs_root, name)
        try:
            fds = os.listdir(base)
        except OSError:
            continue
        for fd in fds:
            try:
                info = os.stat('%s/%s' % (base, fd))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in inodes:
                found.add(int(name))
                break
    return sorted(found)


def kill(pids, grace=5.0):
    """SIGKILL ``pids`` and wait up to ``grace`` s for them to go."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.time() + grace
    while time.time() < deadline and any(process_start(pid) for pid in pids):
        time.sleep(0.05)


def _reap_entry(entry):
    """Clean one recorded run whose owner is gone: kill what still holds its files, remove them and its
    directory. Returns (removed paths, left paths with why)."""
    key = _key(entry)
    parent_fd = reopen_dir(entry['parent'], entry.get('parent_dev'), entry.get('parent_ino'))
    try:
        if entry.get('ino') is not None:
            found = _find(parent_fd, entry['name'], entry['dev'], entry['ino'])
        else:
            found = entry['name']  # killed between mkdir and the record: only a directory of ours is taken
        if found is None:
            return [], ['%s: not found (removed already)' % key]
        try:
            run_fd = os.open(found, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return [], ['%s: not found (removed already)' % key]
            if exc.errno == errno.EIO:
                raise
            return [], ['%s: %s, left alone' % (key, os.strerror(exc.errno))]
        try:
            info = os.fstat(run_fd)
            if info.st_uid != entry.get('uid', 0) or stat.S_IMODE(info.st_mode) != 0o700 or (
                    entry.get('ino') is not None and not _same(info, entry)):
                return [], ['%s: not the run\'s directory (owner uid %d, mode %04o), left alone'
                            % (key, info.st_uid, stat.S_IMODE(info.st_mode))]
            files = {}
            for name, want in (entry.get('files') or {}).items():
                if want is None:
                    try:
                        st = os.stat(name, dir_fd=run_fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if st.st_uid == info.st_uid and st.st_nlink == 1:
                        want = {'dev': st.st_dev, 'ino': st.st_ino}
                files[name] = want
            kill(holders(set((w['dev'], w['ino']) for w in files.values() if w)))
            left = _remove_files(run_fd, files)
        finally:
            os.close(run_fd)
        removed = ['%s/%s' % (key, name) for name in files if name not in left]
        if _remove_dir(parent_fd, found, info.st_dev, info.st_ino):
            removed.append(key)
        else:
            left.append('%s: not empty, left alone' % key)
        durable(parent_fd)
        return removed, left
    finally:
        os.close(parent_fd)


def reap(state_dir, current=None, check_mode=False, job_id=None, writer='checkpoint_job'):
    """Clean what dead runs left: every recorded run whose owner is gone, and - when ``current`` (the run id that
    holds the node's lease) is given - every run of another run, its owner killed first (the lease says no other
    run of the collection may be writing on the node). ``job_id``: only the runs of that background job.

    Returns {reaped: [{run_dir, reason, removed, left}], kept: [{run_dir, reason}], errors: []}. ``check_mode``:
    reports what it would do, changes nothing.
    """
    out = {'reaped': [], 'kept': [], 'errors': []}
    try:
        runs = state_store.read_record(state_dir, RECORD) if state_store.check_dir(state_dir) else None
    except (state_store.StateError, OSError, ValueError) as exc:
        out['errors'].append(str(exc))
        return out
    for key, entry in sorted((runs or {}).items()):
        if not isinstance(entry, dict) or not entry.get('parent') or not entry.get('name'):
            continue
        owner = entry.get('owner') or {}
        if job_id is not None and owner.get('job_id') != job_id:
            continue
        alive = owner_alive(owner)
        if alive and (current is None or entry.get('run_id') == current):
            out['kept'].append({'run_dir': key, 'reason': 'its owner still runs (%s)' % _describe(owner)})
            continue
        reason = ('it belongs to run %s, not to run %s that holds the node now; its owner (%s) was stopped'
                  % (entry.get('run_id'), current, _describe(owner)) if alive else
                  'its owner (%s) is gone' % _describe(owner))
        if check_mode:
            out['reaped'].append({'run_dir': key, 'reason': reason, 'removed': [], 'left': [], 'check_mode': True})
            continue
        try:
            if alive:
                stop_owner(owner)
            removed, left = _reap_entry(entry)
        except Unreachable as exc:
            # not mounted (yet): the record stays for a run that can reach it
            out['kept'].append({'run_dir': key, 'reason': '%s; kept for a later run' % exc})
            continue
        except (ScratchError, OSError) as exc:
            out['errors'].append('%s: %s' % (key, exc))
            removed, left = [], ['%s: %s' % (key, exc)]
            if not isinstance(exc, ScratchError):
                # an I/O error: the record stays, a later run tries again
                out['reaped'].append({'run_dir': key, 'reason': reason, 'removed': removed, 'left': left})
                continue
        out['reaped'].append({'run_dir': key, 'reason': reason, 'removed': removed, 'left': left})
        _update(state_dir, writer, lambda runs, key=key: runs.pop(key, None))
    return out


def _describe(owner):
    if owner.get('job_id'):
        return 'background job %s' % owner['job_id']
    return 'pid %s' % owner.get('pid')


def stop_owner(owner):
    """End the background job's session or the process that owns a run (TERM, KILL after the grace)."""
    if owner.get('session'):
        if fio_job.session_alive(owner):  # a gone worker's session id may be another process's by now
            fio_job.end_session(owner['session'])
    elif owner.get('pid'):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(owner['pid'], sig)
            except OSError:
                return
            deadline = time.time() + fio_job.KILL_GRACE_S
            while time.time() < deadline and owner_alive(owner):
                time.sleep(0.1)
            if not owner_alive(owner):
                return
