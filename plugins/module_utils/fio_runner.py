# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running fio from the measuring modules (checkpoint_write, queue_depth_sweep), and the files around it.

Why not ``AnsibleModule.run_command``: the checkpoint write reports progress while fio runs (``tick`` every
``interval`` seconds, into its ``progress_file``), and a run past its timeout must end fio's whole process
group (fio forks one process per job), which run_command can neither do nor let a caller do.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import subprocess
import tempfile
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.atomic_file import write_json_atomic


def backing_device(path, sysfs_root='/sys'):
    """Kernel name of the block device holding ``path`` (md127, nvme1n1p1), None for tmpfs/overlay."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return None
    link = '%s/dev/block/%d:%d' % (sysfs_root.rstrip('/'), os.major(dev), os.minor(dev))
    try:
        return os.path.basename(os.readlink(link).rstrip('/')) or None
    except OSError:
        return None


def allocated(path):
    """Bytes allocated to ``path`` (st_blocks x 512), 0 when it is missing."""
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


def sectors_written(names, sysfs_root='/sys'):
    """{name: 512-byte sectors written since boot} of block devices (the 7th field of sysfs ``stat``)."""
    counts = {}
    for name in names:
        try:
            with open(os.path.join(sysfs_root, 'class', 'block', name, 'stat')) as handle:
                counts[name] = int(handle.read().split()[6])
        except (IOError, OSError, IndexError, ValueError):
            counts[name] = None
    return counts


def written_so_far(files, shard_bytes, start_sectors=None, sysfs_root='/sys'):
    """Bytes the ranks have written so far: from the allocated blocks of their shard files, or, for raw devices,
    from the sectors the devices wrote since ``start_sectors`` (:func:`sectors_written` before the write)."""
    if start_sectors:
        now = sectors_written(sorted(start_sectors), sysfs_root)
        return sum((now[name] - start) * 512 for name, start in start_sectors.items()
                   if start is not None and now[name] is not None)
    return sum(min(allocated(path), shard_bytes) for path in files)


def remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def write_progress(path, doc):
    """Atomically replace ``path`` with JSON ``doc`` (a reader never sees half a document): a progress file, or a
    background job's record (fio_job). Not fsynced: progress lives in /run and is rewritten every second."""
    write_json_atomic(path, doc, fsync=False, pretty=False)


def stop(proc):
    """SIGTERM fio's process group (fio ends its jobs), SIGKILL after 10 s."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            return
        deadline = time.time() + grace
        while time.time() < deadline:
            if proc.poll() is not None:
                return
            time.sleep(0.1)


def run_fio(argv, timeout, tick=None, interval=2.0):
    """Run fio; ``tick(elapsed)`` every ``interval`` s. Returns (rc, stdout, stderr, wall_s, timed_out)."""
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    start = time.time()
    proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
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
