# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measurements that outlive the task that started them: the measuring modules' background jobs.

A play that shows progress while a measurement runs starts it in the background and polls it. Ansible's own
``async`` cannot carry it on every connection: under Mitogen (mitogen_linear 0.3.54, ansible-core 2.19) an async
task of a collection module never starts (measured). So the module itself starts a detached worker
(:func:`start_call`: a process in a session of its own, standard streams on /dev/null) and returns at once, and a
poll is an ordinary short task. The worker runs fio (in its own session, so :func:`cancel` ends both), bounds it
with the module's timeout, reports progress, removes the run's files when fio ends (whoever polls or not) and
writes its result beside its record.

The job store: one root-owned directory (mode 0700, refused when it is a symlink, owned by someone else or
writable by others), one folder per job in it, made with ``mkdtemp``. Nothing here follows a symlink a user
could plant: the store's parent is root's /run, and every file is created inside the job's own folder.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import write_atomic
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import (
    install_terminate_handlers,
    process_start,
    process_table,
    write_progress,
)

JOB_STORE = '/run/ai_storage_checkpoint_io/jobs'
KILL_GRACE_S = 10
_JOB_ID = re.compile(r'^[A-Za-z0-9_.-]{1,128}$')


class JobError(Exception):
    """A job store or job record that cannot be used (the message says which and why)."""


PATH_MAX = 4096
NAME_MAX = 255


def check_store_path(path, option='job_store'):
    """The job store's path as an option gives it: an absolute path string within the kernel's limits."""
    if not isinstance(path, str) or not path.startswith('/') or '\0' in path or path.rstrip('/') == '':
        raise JobError('%s: %r is not an absolute directory path below /' % (option, path))
    if len(path.encode('utf-8', 'surrogateescape')) >= PATH_MAX - NAME_MAX:
        raise JobError('%s: the path is %d bytes long, above the %d bytes a job store may have (%r...)'
                       % (option, len(path.encode('utf-8', 'surrogateescape')), PATH_MAX - NAME_MAX - 1, path[:60]))
    for part in path.split('/'):
        if len(part.encode('utf-8', 'surrogateescape')) > NAME_MAX:
            raise JobError('%s: %r... (%d bytes) has a name of %d bytes, above the %d bytes a file name may have'
                           % (option, path[:60], len(path.encode('utf-8', 'surrogateescape')),
                              len(part.encode('utf-8', 'surrogateescape')), NAME_MAX))
    return path


def ensure_store(path=JOB_STORE):
    """Make (or check) the job store: a real directory owned by this user, writable by nobody else."""
    check_store_path(path)
    parent = os.path.dirname(path.rstrip('/'))
    if not os.path.isdir(parent):
        os.makedirs(parent, 0o755)
    try:
        os.mkdir(path, 0o700)
    except OSError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise JobError('job store %s is not a directory (a symlink or a file is refused)' % path)
    if info.st_uid != os.geteuid():
        raise JobError('job store %s belongs to uid %d, not to uid %d that runs the module'
                       % (path, info.st_uid, os.geteuid()))
    if info.st_mode & 0o022:
        raise JobError('job store %s is writable by group or others (mode %o)' % (path, stat.S_IMODE(info.st_mode)))
    return path


HEARTBEAT_RANGE = (30, 86400)


def check_heartbeat(value, option='heartbeat'):
    """A module's heartbeat option: 0 (off) or seconds within HEARTBEAT_RANGE; JobError naming the value."""
    low, high = HEARTBEAT_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or (value != 0 and not low <= value <= high):
        raise JobError('%s: %r is outside %d..%d seconds (or 0: no heartbeat)' % (option, value, low, high))
    return value


def heartbeat_for(poll, hosts=1, forks=5, floor=30):
    """The heartbeat of a job polled every ``poll`` seconds by a run over ``hosts`` hosts with ``forks`` forks: under
    the linear strategy a host is polled again only after the task has run on every host (hosts / forks batches,
    each up to ``poll`` seconds of waiting plus its start-up), so the deadline is three such rounds (5 s of start-up
    each), at least six polls and ``floor`` (half a minute); capped at HEARTBEAT_RANGE's top. A stopped controller then stops the node's job within it."""
    poll = max(float(poll), 1.0)
    batches = -(-max(int(hosts), 1) // max(int(forks), 1))
    seconds = max(float(floor), 6 * poll, 3 * batches * (poll + 5))
    low, high = HEARTBEAT_RANGE
    return int(min(max(seconds, low), high))


def job_dir(job_id, store=JOB_STORE):
    check_store_path(store)
    if not isinstance(job_id, str) or not _JOB_ID.match(job_id) or job_id in ('.', '..'):
        raise JobError('job_id %r is not a job id this collection made' % (job_id,))
    return os.path.join(store, job_id)


def _new_job(label, store):
    """A new job folder in the (checked) store, made with mkdtemp: (path, job id)."""
    ensure_store(store)
    prefix = re.sub(r'[^A-Za-z0-9_-]', '_', label or 'job')[:32] + '.'
    path = tempfile.mkdtemp(prefix=prefix, dir=store)
    return path, os.path.basename(path)


def start_call(func, record, label=None, store=JOB_STORE, keep_fds=(), heartbeat_s=None):
    """Run ``func(report)`` in a detached process (a session of its own, standard streams on /dev/null, cwd /);
    return the job id. ``func`` returns the job's result (a JSON-able dict) or raises: its message (and the
    exception's ``result`` attribute, a partial result) become the job's failure. ``report(doc)`` replaces the
    job's progress document (:func:`call_progress`). ``keep_fds``: descriptors the worker keeps (the run's files,
    see module_utils/common/scratch.py); every other one is closed. The worker bounds its own fio runs (fio_runner's
    timeout); :func:`cancel` ends it (SIGTERM: it ends fio and removes the run's files) and the fio it runs.
    ``heartbeat_s``: the job lives only while it is polled - every :func:`poll` touches its heartbeat file, and a
    worker whose heartbeat is older than this ends itself as :func:`cancel` would (a controller killed, or its
    connection lost, stops polling: the node stops writing within this deadline, not at the write's timeout)."""
    path, job_id = _new_job(label, store)
    doc = dict(record, job_id=job_id, started=time.time(), session=None, call=True, heartbeat_s=heartbeat_s)
    write_progress(os.path.join(path, 'job.json'), doc)
    beat(path)
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                _run_call(func, path, keep_fds, heartbeat_s)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    # The session the first child led (it exits at once; the worker and its fio keep its session id), and the
    # worker with its start time: a session id is a pid, which the kernel reuses once the job is gone, so the job is
    # judged alive (and its session ended) only while that very worker runs.
    doc['session'] = pid
    members = session_members(pid)
    if members:
        doc['worker'] = [members[0], process_start(members[0])]
    write_progress(os.path.join(path, 'job.json'), doc)
    return job_id


def session_alive(record):
    """Whether a job's (or a run owner's) session still runs: the recorded worker with its start time when the
    record has one, else (an older record) any process of the session."""
    worker = record.get('worker') if isinstance(record, dict) else None
    if isinstance(worker, list) and len(worker) == 2 and worker[1] is not None:
        return process_start(int(worker[0])) == worker[1]
    return bool(session_members(record.get('session') if isinstance(record, dict) else None))


def _close_fds_but(keep):
    low = 3
    for fd in sorted(set(fd for fd in keep if fd >= 3)) + [65536]:
        os.closerange(low, fd)
        low = fd + 1


HEARTBEAT = 'heartbeat'
EXPIRED = 'heartbeat-expired'


def beat(path):
    """Touch a job folder's heartbeat (made when missing): the controller is still polling."""
    name = os.path.join(path, HEARTBEAT)
    try:
        os.utime(name, None)
    except OSError:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.close(fd)


def heartbeat_age(path, now=None):
    """Seconds since the job was last polled (its heartbeat's mtime), None when it has no heartbeat."""
    try:
        return (time.time() if now is None else now) - os.stat(os.path.join(path, HEARTBEAT)).st_mtime
    except OSError:
        return None


def _watch_heartbeat(path, heartbeat_s, interval=1.0):
    """In the worker: once no poll touched the heartbeat for ``heartbeat_s``, leave a note and SIGTERM this
    process (its handlers end fio and remove the run's files, as :func:`cancel` does)."""
    while True:
        time.sleep(min(interval, heartbeat_s / 4.0))
        age = heartbeat_age(path)
        if age is not None and age > heartbeat_s:
            write_atomic(os.path.join(path, EXPIRED), '%.1f\n' % age, fsync=False)
            os.kill(os.getpid(), signal.SIGTERM)
            return


def _run_call(func, path, keep_fds=(), heartbeat_s=None):
    """The detached worker of :func:`start_call` (never returns)."""
    status = 1
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        _close_fds_but(keep_fds)
        os.chdir('/')
        install_terminate_handlers()
        if heartbeat_s:
            threading.Thread(target=_watch_heartbeat, args=(path, float(heartbeat_s)), daemon=True).start()

        def report(doc):
            write_progress(os.path.join(path, 'progress.json'), dict(doc, updated=time.time()))
        try:
            outcome = dict(ok=True, result=func(report))
            status = 0
        except BaseException as exc:  # the job's boundary: whatever ended it is the poll's message
            msg = str(exc) or type(exc).__name__
            expired = _read(path, EXPIRED).strip()
            if expired:
                msg = ('no poll for %s s, above the heartbeat deadline of %s s (the controller stopped, or lost its '
                       'connection): the write was stopped and its files removed (%s)' % (expired, heartbeat_s, msg))
            outcome = dict(ok=False, msg=msg, result=getattr(exc, 'result', None))
        write_progress(os.path.join(path, 'result.json'), outcome)
        write_atomic(os.path.join(path, 'rc'), '%d\n' % status, fsync=False)
    finally:
        os._exit(status)


def call_progress(job_id, store=JOB_STORE):
    """The last progress document a :func:`start_call` job reported ({} before the first)."""
    try:
        with open(os.path.join(job_dir(job_id, store), 'progress.json')) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return {}


def call_outcome(job_id, store=JOB_STORE):
    """{ok, result, msg} of a finished :func:`start_call` job, or None when it ended without one."""
    try:
        with open(os.path.join(job_dir(job_id, store), 'result.json')) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return None


def load(job_id, store=JOB_STORE):
    path = job_dir(job_id, store)
    try:
        with open(os.path.join(path, 'job.json')) as handle:
            return json.load(handle)
    except (IOError, OSError):
        raise JobError('no job %s in %s (finished and collected already, or never started)' % (job_id, store))
    except ValueError as exc:
        raise JobError('job record of %s is not JSON: %s' % (job_id, exc))


def poll(job_id, wait=0.0, store=JOB_STORE, interval=0.2):
    """Wait up to ``wait`` s for the job; (record, ended). ``ended`` is None while it runs, else
    ``{rc, wall_s, lost}`` (``lost``: the worker is gone without writing its status, killed from outside)."""
    record = load(job_id, store)
    path = job_dir(job_id, store)
    rc_file = os.path.join(path, 'rc')
    deadline = time.time() + max(0.0, float(wait))
    while not os.path.exists(rc_file):
        if record.get('heartbeat_s'):
            beat(path)  # the controller polls: the worker goes on
        if not session_alive(record) and not os.path.exists(rc_file):
            return record, dict(rc=None, wall_s=round(time.time() - record['started'], 3), lost=True)
        if time.time() >= deadline:
            return record, None
        time.sleep(interval)
    try:
        rc = int(_read(path, 'rc').strip())
    except ValueError:
        rc = None
    finished = os.stat(rc_file).st_mtime
    return record, dict(rc=rc, wall_s=round(max(0.0, finished - record['started']), 3), lost=False)


def end_session(sid, grace=KILL_GRACE_S):
    """End every process of session ``sid`` (TERM, KILL after ``grace`` s). True when one was running."""
    if not session_members(sid):
        return False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in session_members(sid):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.time() + grace
        while time.time() < deadline:
            if not session_members(sid):
                return True
            time.sleep(0.1)
    return True


def cancel(job_id, store=JOB_STORE):
    """End every process of a running job's session (TERM: the worker ends fio and removes the run's files; KILL
    after the grace). True when one was running. A session whose recorded worker is gone is not the job's any more
    (its id may name another process's session by now): nothing is killed."""
    record = load(job_id, store)
    if not session_alive(record):
        return False
    return end_session(record.get('session'))


def jobs(store=JOB_STORE):
    """The records of every job in the store (running or not collected), [] without a store."""
    try:
        names = sorted(os.listdir(store))
    except OSError:
        return []
    found = []
    for name in names:
        try:
            found.append(load(name, store))
        except JobError:
            continue
    return found


def collect(job_id, store=JOB_STORE):
    """Remove a job's folder (its record and fio's output), after its result was read."""
    shutil.rmtree(job_dir(job_id, store), ignore_errors=True)


def session_members(sid, procfs_root='/proc'):
    """Pids of the live (not zombie) processes of session ``sid``."""
    if not sid:
        return []
    return [pid for pid, _parent, session in process_table(procfs_root) if session == int(sid)]


def _read(path, name):
    try:
        with open(os.path.join(path, name), 'rb') as handle:
            return handle.read().decode('utf-8', 'replace')
    except (IOError, OSError):
        return ''
