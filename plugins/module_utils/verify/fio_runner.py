# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running fio from the measuring modules (checkpoint_write, queue_depth_sweep, engine_verify), and ending it.

Why not ``AnsibleModule.run_command``: the checkpoint write reports progress while fio runs (``tick`` every
``interval`` seconds), fio gets the descriptors of the run's files (``pass_fds``, see module_utils/common/scratch.py), and
fio must end whenever the module ends, which run_command can neither do nor let a caller do.

How fio is made to end with the module (measured with fio 3.33 on Linux 6.1):

* fio's job processes call setsid(): a kill of the module's process group (Ansible's async wrapper on timeout
  kills the group with SIGKILL) and a kill of fio's main process both leave them writing. So the measuring modules
  run fio with ``--thread``: the jobs are threads of ONE process.
* That process stays in the module's process group and session (no ``start_new_session``), so the async
  wrapper's group kill ends it, and it dies with the module (``PR_SET_PDEATHSIG`` SIGKILL) when only the module is
  killed.
* On its timeout, and on SIGTERM, SIGINT or SIGHUP to the module (:func:`terminate_on_signals`), the module ends fio
  and every process fio started (TERM, KILL after the grace), then removes the run's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import ctypes
import os
import signal
import subprocess
import tempfile
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import write_json_atomic
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import block_stat

PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
KILL_GRACE_S = 10


class Terminated(Exception):
    """The module (or a background worker) was told to stop by a signal; fio is ended and the run cleaned up on
    the way out."""

    def __init__(self, signum):
        Exception.__init__(self, 'terminated by signal %d (%s)' % (signum, _signal_name(signum)))
        self.signum = signum


def _signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return 'signal %d' % signum


def _raise_terminated(signum, frame):
    # Once: the cleanup that follows must not be cut short by a second signal.
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    raise Terminated(signum)


@contextlib.contextmanager
def terminate_on_signals():
    """SIGTERM, SIGINT and SIGHUP raise :class:`Terminated` (once) while the block runs, so the ``finally``
    clauses that end fio and remove the run's files run; the handlers before are restored after."""
    before = dict((sig, signal.signal(sig, _raise_terminated)) for sig in STOP_SIGNALS)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def install_terminate_handlers():
    """The handlers of :func:`terminate_on_signals` for the rest of a process (a background worker)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _raise_terminated)


def _libc():
    """The C library through the process's own symbols (dlopen(NULL): every Python on Linux links libc):
    ctypes.util.find_library('c') would run ``ldconfig -p`` as a process on every import of this module."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _die_with_parent(parent):
    """In the child before exec: SIGKILL when the module dies; gone at once when it already has."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def sectors_written(names, sysfs_root='/sys'):
    """{name: 512-byte sectors written since boot} of block devices (sysfs.block_stat; None where unreadable)."""
    return dict((name, block_stat(sysfs_root, name)['sectors_written']) for name in names)


def written_since(start_sectors, sysfs_root='/sys'):
    """Bytes raw devices wrote since ``start_sectors`` (:func:`sectors_written` before the write)."""
    now = sectors_written(sorted(start_sectors), sysfs_root)
    return sum((now[name] - start) * 512 for name, start in start_sectors.items()
               if start is not None and now[name] is not None)


def check_progress_path(path, option='progress_file'):
    """Why ``path`` cannot be a progress file (ValueError naming the option, the value and the limit): its
    directory missing, a directory itself, a name or a path past the kernel's limits (the atomic writer's
    temporary name is 16 bytes longer)."""
    if not isinstance(path, str) or not path or '\0' in path:
        raise ValueError('%s: %r is not a file path' % (option, path))
    name = os.path.basename(path)
    size = len(name.encode('utf-8', 'surrogateescape'))
    if size > 255 - 16:
        raise ValueError('%s: %r... (%d bytes): its file name is %d bytes long, above the %d bytes it may have'
                         % (option, path[:60], len(path.encode('utf-8', 'surrogateescape')), size, 255 - 16))
    size = len(path.encode('utf-8', 'surrogateescape'))
    if size >= 4096 - 16:
        raise ValueError('%s: the path is %d bytes long, above the %d bytes it may have (%r...)'
                         % (option, size, 4096 - 17, path[:60]))
    if not name or os.path.isdir(path):
        raise ValueError('%s: %s is a directory, not a file' % (option, path))
    if not os.path.isdir(os.path.dirname(path) or '.'):
        raise ValueError('%s: the directory of %s does not exist' % (option, path))
    return path


def check_fio_path(path, option='fio_path'):
    """``path`` as the fio program a module runs: an absolute path to an executable regular file (a symlink to one
    is followed); ValueError naming the option and the value otherwise."""
    if not isinstance(path, str) or not path.startswith('/') or '\0' in path:
        raise ValueError('%s: %r is not an absolute path of the fio program' % (option, path))
    try:
        ok = os.path.isfile(path) and os.access(path, os.X_OK)
    except (OSError, ValueError):
        ok = False
    if not ok:
        raise ValueError('%s: %s is not an executable file' % (option, path))
    return path


def write_progress(path, doc):
    """Atomically replace ``path`` with JSON ``doc`` (a reader never sees half a document): a progress file, or a
    background job's record (fio_job). Not fsynced: progress lives in /run and is rewritten every second."""
    write_json_atomic(path, doc, fsync=False, pretty=False)


def process_start(pid, procfs_root='/proc'):
    """The start time of ``pid`` (clock ticks since boot, /proc/<pid>/stat field 22), None when it is gone or a
    zombie: with the boot id, it tells a live owner from a reused pid."""
    try:
        with open('%s/%d/stat' % (procfs_root, pid)) as handle:
            text = handle.read()
    except (IOError, OSError):
        return None
    fields = text.rsplit(')', 1)[-1].split()
    if len(fields) < 20 or fields[0] in ('Z', 'X'):
        return None
    return fields[19]


def process_table(procfs_root='/proc'):
    """[(pid, ppid, session)] of the live (not zombie) processes, from /proc/<pid>/stat."""
    table = []
    for name in os.listdir(procfs_root):
        if not name.isdigit():
            continue
        try:
            with open('%s/%s/stat' % (procfs_root, name)) as handle:
                fields = handle.read().rsplit(')', 1)[1].split()
        except (IOError, OSError, IndexError):
            continue
        # After the command name: state, ppid, pgrp, session.
        if len(fields) > 3 and fields[0] not in ('Z', 'X'):
            table.append((int(name), int(fields[1]), int(fields[3])))
    return table


def descendants(pid, procfs_root='/proc'):
    """Pids of the live processes below ``pid`` (children, their children...)."""
    children = {}
    for child, parent, _session in process_table(procfs_root):
        children.setdefault(parent, []).append(child)
    found = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def stop(proc, grace=KILL_GRACE_S):
    """End fio and every process below it: SIGTERM (fio ends its jobs), SIGKILL after ``grace`` s."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        if proc.poll() is not None:
            break
        for pid in [proc.pid] + descendants(proc.pid):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.time() + wait
        while time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
    # What fio started and left behind (a process that does not die with its parent) goes too.
    for pid in descendants(proc.pid) if proc.poll() is None else []:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def run_fio(argv, timeout, tick=None, interval=2.0, pass_fds=()):
    """Run fio in the module's own process group, with the descriptors ``pass_fds`` inherited;
    ``tick(elapsed)`` every ``interval`` s. Returns (rc, stdout, stderr, wall_s, timed_out).

    fio ends with the module whatever ends the module: past ``timeout``, on :class:`Terminated` (raised through
    here after fio is stopped) and on a kill of the module's process group or of the module alone.
    """
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    start = time.time()
    proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, pass_fds=tuple(pass_fds),
                            preexec_fn=lambda parent=os.getpid(): _die_with_parent(parent))
    timed_out = False
    next_tick = start + interval
    try:
        while proc.poll() is None:
            now = time.time()
            if now - start > timeout:
                timed_out = True
                stop(proc)
                break
            if tick is not None and now >= next_tick:
                tick(now - start)
                next_tick = now + interval
            time.sleep(max(0.01, min(0.1, next_tick - now, start + timeout - now)))
    finally:
        if proc.poll() is None:
            stop(proc)
    wall = time.time() - start
    out.seek(0)
    err.seek(0)
    stdout = out.read().decode('utf-8', 'replace')
    stderr = err.read().decode('utf-8', 'replace')
    out.close()
    err.close()
    return proc.returncode, stdout, stderr, wall, timed_out
