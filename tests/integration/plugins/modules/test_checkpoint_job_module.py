# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""checkpoint_write background=true + checkpoint_job: the host's real fio, detached, polled, collected.

Stand-in fio scripts only where a real fio cannot be made to fail, hang or pause on cue.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat
import time

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import fio_job
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_write

from helpers import fio_capabilities, poll_job, run_fio_module

MIB = 1024 * 1024
STATE = {}
# A stand-in fio's shell lines that write 4 MiB into the first --filename it is given (a /proc/self/fd name).
WRITE_FIRST = (u'for a in "$@"; do case "$a" in --filename=*) dd if=/dev/zero of="${a#--filename=}" bs=1M count=4 '
               u'conv=notrunc 2>/dev/null; break;; esac; done\n')


@pytest.fixture(autouse=True)
def state_dir(tmp_path):
    STATE['dir'] = str(tmp_path / 'state')
    yield STATE['dir']
    if os.path.isdir(STATE['dir']):
        assert state_store.read_record(STATE['dir'], 'scratch') is None


@pytest.fixture(scope='module')
def host(tmp_path_factory):
    return fio_capabilities(tmp_path_factory.mktemp('probe'))


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / 'jobs')


def start(capsys, store, **params):
    params.update(background=True, job_store=store)
    params.setdefault('state_dir', STATE['dir'])
    return run_fio_module(capsys, checkpoint_write.main, params)


def poll(capsys, store, job_id, **params):
    params.setdefault('state_dir', STATE['dir'])
    return poll_job(capsys, store, job_id, **params)


def wait_done(capsys, store, job_id, limit=60):
    deadline = time.time() + limit
    while time.time() < deadline:
        rc, out = poll(capsys, store, job_id, wait=1)
        if rc != 0 or out['finished']:
            return rc, out
    raise AssertionError('job %s did not finish in %d s' % (job_id, limit))


def directory(tmp_path, name='ckpt'):
    path = tmp_path / name
    path.mkdir()
    return str(path)


def fake_fio(tmp_path, body):
    fake = tmp_path / 'fio'
    fake.write_text(u'#!/bin/sh\n' + body)
    fake.chmod(0o755)
    return str(fake)


def test_background_write_with_real_fio_gives_the_foreground_result(tmp_path, host, capsys, store):
    target = directory(tmp_path)
    began = time.time()
    rc, started = start(capsys, store, directories=[target], ranks=2, shard_size='8M', queue_depth=4,
                        label='after', **host)
    assert rc == 0, started
    assert started['started'] is True and started['job_id'].startswith('after.')
    assert started['changed'] is False and started['total_bytes'] == 16 * MIB
    assert 'throughput_gib_s' not in started  # nothing measured yet
    rc, done = wait_done(capsys, store, started['job_id'])
    assert rc == 0, done
    assert done['finished'] is True and done['label'] == 'after' and done['changed'] is False
    result = done['result']
    assert result['total_bytes'] == 16 * MIB and result['ranks'] == 2 and result['queue_depth'] == 4
    assert [r['bytes'] for r in result['per_rank']] == [8 * MIB, 8 * MIB]
    assert result['duration_s'] > 0 and result['throughput_gib_s'] > 0
    assert 0 < result['wall_s'] <= time.time() - began
    assert done['progress']['bytes_written'] == done['progress']['total_bytes'] == 16 * MIB
    # Collected: shards and the job's folder are gone, the store stays; a second poll names the job.
    assert os.listdir(target) == []
    assert os.listdir(store) == []
    rc, again = poll(capsys, store, started['job_id'], wait=0)
    assert rc == 1 and started['job_id'] in again['msg'] and 'no job' in again['msg']


def test_progress_while_it_runs_then_the_result(tmp_path, capsys, store):
    """A stand-in fio writes half of a shard, pauses, then prints a real fio 3.33 result."""
    from testenv import FIXTURES
    target = [directory(tmp_path, 'a'), directory(tmp_path, 'b')]
    fixture = os.path.join(FIXTURES, 'fio', 'fio-3.33_ckpt_write_2ranks_8m_qd8_iouring_fsync.json')
    fake = fake_fio(tmp_path, WRITE_FIRST + u'sleep 3\ncat "%s"\n' % fixture)
    rc, started = start(capsys, store, directories=target, ranks=2, shard_size='8M', fio_path=fake)
    assert rc == 0, started
    seen = []
    for dummy in range(20):
        rc, out = poll(capsys, store, started['job_id'], wait=0.3)
        assert rc == 0, out
        if out['finished']:
            break
        seen.append(out['progress'])
    assert seen and all(p['total_bytes'] == 16 * MIB for p in seen)
    assert max(p['bytes_written'] for p in seen) == 4 * MIB
    assert out['finished'] and out['result']['throughput_bytes_s'] == int(16 * MIB / 0.013)
    assert os.listdir(target[0]) == []


def test_a_failing_write_fails_the_poll_with_its_message(tmp_path, capsys, store):
    target = directory(tmp_path)
    fake = fake_fio(tmp_path, WRITE_FIRST + u'echo "fio: engine io_uring not loadable" >&2\nexit 1\n')
    rc, started = start(capsys, store, directories=[target], ranks=1, shard_size='1M', fio_path=fake)
    assert rc == 0
    rc, out = wait_done(capsys, store, started['job_id'])
    assert rc == 1
    assert out['msg'] == '%s: fio exited with 1: fio: engine io_uring not loadable' % started['job_id']
    assert os.listdir(target) == [] and os.listdir(store) == []


def test_timeout_ends_a_job_nobody_polls(tmp_path, capsys, store):
    target = directory(tmp_path)
    fake = fake_fio(tmp_path, u'exec sleep 60\n')
    rc, started = start(capsys, store, directories=[target], ranks=1, shard_size='1M', fio_path=fake, timeout=1)
    assert rc == 0
    time.sleep(2.5)  # nobody polls: coreutils timeout ends it on its own
    record = fio_job.load(started['job_id'], store)
    assert fio_job.session_members(record['session']) == []
    rc, out = poll(capsys, store, started['job_id'], wait=0)
    assert rc == 1 and out['msg'].endswith('fio ran past timeout 1 s and was killed')


def test_cancel_ends_every_process_and_cleans_up(tmp_path, capsys, store):
    target = directory(tmp_path)
    fake = fake_fio(tmp_path, WRITE_FIRST + u'sleep 60 &\nexec sleep 60\n')
    rc, started = start(capsys, store, directories=[target], ranks=1, shard_size='1M', fio_path=fake)
    assert rc == 0
    record = fio_job.load(started['job_id'], store)
    deadline = time.time() + 10
    while len(fio_job.session_members(record['session'])) < 3 and time.time() < deadline:
        time.sleep(0.1)
    members = fio_job.session_members(record['session'])
    assert len(members) >= 3  # the worker, the stand-in and its background sleep
    rc, out = poll(capsys, store, started['job_id'], cancel=True)
    assert rc == 0 and out['cancelled'] is True and out['finished'] is True
    assert fio_job.session_members(record['session']) == []
    assert os.listdir(target) == [] and os.listdir(store) == []


def test_the_write_returns_before_fio_ends(tmp_path, capsys, store):
    target = directory(tmp_path)
    fake = fake_fio(tmp_path, u'exec sleep 5\n')
    began = time.time()
    rc, started = start(capsys, store, directories=[target], ranks=1, shard_size='1M', fio_path=fake)
    assert rc == 0 and time.time() - began < 4
    rc, out = poll(capsys, store, started['job_id'], cancel=True)
    assert rc == 0


@pytest.mark.parametrize('job_id', ['../etc', '', 'a/b', '..'])
def test_a_job_id_that_is_not_ours_is_refused(capsys, store, job_id):
    rc, out = poll(capsys, store, job_id, wait=0)
    assert rc == 1 and 'is not a job id' in out['msg']


def test_wait_out_of_range_is_refused(capsys, store):
    rc, out = poll(capsys, store, 'after.x', wait=7200)
    assert rc == 1 and out['msg'] == 'wait: 7200 is outside 0..3600 seconds'
    for wait, message in ((True, 'wait: True is not a number'), ('nan', "wait: 'nan' is not a finite number")):
        rc, out = poll(capsys, store, 'after.x', wait=wait)
        assert rc == 1 and out['msg'] == message, out
    rc, out = poll(capsys, 'relative/jobs', 'after.x', wait=1)
    assert rc == 1 and out['msg'] == "job_store: 'relative/jobs' is not an absolute directory path below /"


def test_background_and_progress_file_exclude_each_other(tmp_path, capsys, store):
    rc, out = start(capsys, store, directories=[directory(tmp_path)], ranks=1, shard_size='1M',
                    progress_file=str(tmp_path / 'p.json'))
    assert rc == 1 and 'mutually exclusive' in out['msg']


def test_a_job_store_others_can_write_is_refused(tmp_path, capsys):
    store = tmp_path / 'open'
    store.mkdir()
    store.chmod(0o777)
    rc, out = start(capsys, str(store), directories=[directory(tmp_path)], ranks=1, shard_size='1M')
    assert rc == 1 and 'writable by group or others (mode 777)' in out['msg']


def test_a_job_store_that_is_a_symlink_is_refused(tmp_path, capsys):
    real = tmp_path / 'real'
    real.mkdir(mode=0o700)
    link = tmp_path / 'link'
    link.symlink_to(real)
    rc, out = start(capsys, str(link), directories=[directory(tmp_path)], ranks=1, shard_size='1M')
    assert rc == 1 and 'is not a directory (a symlink or a file is refused)' in out['msg']
    assert os.listdir(str(real)) == []


def test_the_store_is_made_private(tmp_path, capsys):
    store = str(tmp_path / 'run' / 'jobs')
    rc, started = start(capsys, store, directories=[directory(tmp_path)], ranks=1, shard_size='1M',
                        fio_path=fake_fio(tmp_path, u'exec sleep 5\n'))
    assert rc == 0
    assert stat.S_IMODE(os.lstat(store).st_mode) == 0o700
    poll(capsys, store, started['job_id'], cancel=True)


def test_a_poll_past_max_runtime_ends_the_job_and_fails_naming_the_limit(tmp_path, capsys, store):
    """Issue 31, finding 9: the roles' poll loops had no deadline; the poll itself now ends a job past it."""
    target = directory(tmp_path)
    fake = fake_fio(tmp_path, WRITE_FIRST + u'exec sleep 60\n')
    rc, started = start(capsys, store, directories=[target], ranks=1, shard_size='1M', fio_path=fake)
    assert rc == 0
    record = fio_job.load(started['job_id'], store)
    rc, out = poll(capsys, store, started['job_id'], wait=0, max_runtime=60)
    assert rc == 0 and not out['finished']  # within the limit: polled as before
    time.sleep(2)
    rc, out = poll(capsys, store, started['job_id'], wait=0, max_runtime=1)
    assert rc == 1 and 'ran past max_runtime 1 s: it was cancelled' in out['msg'], out
    assert out['cancelled'] is True and out['finished'] is True
    assert fio_job.session_members(record['session']) == []
    assert os.listdir(target) == [] and os.listdir(store) == []
