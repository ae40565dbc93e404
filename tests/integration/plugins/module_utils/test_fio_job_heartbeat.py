# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A background job lives only while its controller polls it (issue 31, findings 9 and 16): real detached worker
processes (os.fork, setsid), a temporary job store."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import fio_job


def _slow(report):
    """A job that would run a minute (as fio would), reporting progress."""
    for second in range(60):
        report({'elapsed_s': second})
        time.sleep(1)
    return {'done': True}


def _wait_ended(job_id, store, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        record = fio_job.load(job_id, store)
        if not fio_job.session_members(record['session']):
            return time.time()
        time.sleep(0.2)
    raise AssertionError('job %s still runs after %d s' % (job_id, timeout))


def test_a_job_nobody_polls_ends_itself_at_its_heartbeat_deadline(tmp_path):
    store = str(tmp_path / 'jobs')
    start = time.time()
    job_id = fio_job.start_call(_slow, {'kind': 'test'}, label='beat', store=store, heartbeat_s=3)
    ended = _wait_ended(job_id, store, 30)
    assert 3 <= ended - start < 15  # the deadline (3 s) and the watchdog's step, not the job's minute
    record, status = fio_job.poll(job_id, 0, store)
    assert status and status['rc'] == 1 and not status['lost']
    outcome = fio_job.call_outcome(job_id, store)
    assert not outcome['ok'] and 'above the heartbeat deadline of 3' in outcome['msg'], outcome
    assert record['heartbeat_s'] == 3


def test_a_polled_job_goes_on_past_its_heartbeat_deadline(tmp_path):
    store = str(tmp_path / 'jobs')
    job_id = fio_job.start_call(_slow, {'kind': 'test'}, label='beat', store=store, heartbeat_s=3)
    try:
        for _round in range(8):  # 8 s of polls one second apart: more than twice the deadline
            record, status = fio_job.poll(job_id, 1, store)
            assert status is None, fio_job.call_outcome(job_id, store)
        assert fio_job.heartbeat_age(fio_job.job_dir(job_id, store)) < 2
    finally:
        fio_job.cancel(job_id, store)


def test_a_job_without_a_heartbeat_is_not_watched(tmp_path):
    store = str(tmp_path / 'jobs')
    job_id = fio_job.start_call(_slow, {'kind': 'test'}, label='nobeat', store=store)
    try:
        time.sleep(4)
        assert fio_job.session_members(fio_job.load(job_id, store)['session'])
        assert not os.path.exists(os.path.join(fio_job.job_dir(job_id, store), fio_job.EXPIRED))
    finally:
        fio_job.cancel(job_id, store)


def test_a_session_id_reused_after_the_job_is_not_the_job(tmp_path):
    """Finding 9: a job was a bare session id; once its worker is gone the kernel may give that id to another
    process's session, which a cancel or a reaper then killed. The job is its worker with its start time."""
    store = str(tmp_path / 'jobs')
    job_id = fio_job.start_call(_slow, {'kind': 'test'}, label='reuse', store=store)
    record = fio_job.load(job_id, store)
    worker_pid, worker_start = record['worker']
    assert worker_pid in fio_job.session_members(record['session']) and fio_job.session_alive(record)
    assert fio_job.cancel(job_id, store)
    _wait_ended(job_id, store, 30)
    assert not fio_job.session_alive(record)
    # the same session id, a worker start time that is not the recorded one: another process's session
    other = dict(record, worker=[os.getpid(), 'not-its-start'])
    assert not fio_job.session_alive(other)
    assert fio_job.session_alive(dict(record, session=os.getsid(0), worker=[os.getpid(),
                                                                            fio_job.process_start(os.getpid())]))
