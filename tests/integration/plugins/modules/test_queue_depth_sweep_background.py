# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""queue_depth_sweep background=true + checkpoint_job: the sweep detached with the host's real fio, its progress
polled (depth, run, medians so far), its result collected; a failing sweep and a cancelled one."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import queue_depth_sweep

from helpers import fio_capabilities, poll_job, run_fio_module

MIB = 1024 * 1024


STATE = {}


@pytest.fixture(scope='module')
def host(tmp_path_factory):
    return fio_capabilities(tmp_path_factory.mktemp('probe'))


@pytest.fixture(autouse=True)
def state_dir(tmp_path_factory):
    """Each test's own state store, outside the directory the sweep writes in; no run directory stays recorded."""
    STATE['dir'] = str(tmp_path_factory.mktemp('state'))
    yield STATE['dir']
    assert state_store.read_record(STATE['dir'], 'scratch') is None


def start(capsys, store, **params):
    params.update(background=True, job_store=store)
    params.setdefault('state_dir', STATE['dir'])
    return run_fio_module(capsys, queue_depth_sweep.main, params)


def poll(capsys, store, job_id, **params):
    params.setdefault('state_dir', STATE['dir'])
    return poll_job(capsys, store, job_id, **params)


def follow(capsys, store, job_id, limit=120):
    """Every poll's answer until the job finishes (or fails)."""
    answers = []
    deadline = time.time() + limit
    while time.time() < deadline:
        rc, out = poll(capsys, store, job_id, wait=0.3)
        answers.append((rc, out))
        if rc != 0 or out['finished']:
            return answers
    raise AssertionError('sweep %s did not finish in %d s' % (job_id, limit))


def test_background_sweep_shows_progress_then_returns_the_whole_result(tmp_path, host, capsys):
    store = str(tmp_path / 'jobs')
    bench = tmp_path / 'bench'
    bench.mkdir()
    rc, out = start(capsys, store, directory=str(bench), depths=[1, 2, 4], repeats=2, runtime_per_point=1,
                    size_per_point='16M', scratch_size='8M', exhaustive=True, ranks=2, label='sweep', **host)
    assert rc == 0 and out['started'] and out['job_id'].startswith('sweep.'), out
    answers = follow(capsys, store, out['job_id'])
    rc, last = answers[-1]
    assert rc == 0 and last['finished'], last
    running = [a for code, a in answers if not a['finished']]
    assert running, 'no poll saw the sweep running'
    seen = set((a['progress']['depth'], a['progress']['repeat']) for a in running)
    assert seen & set((d, r) for d in (1, 2, 4) for r in (1, 2)), seen
    assert all(a['progress']['repeats'] == 2 for a in running)
    later = [a for a in running if a['progress']['depth'] == 4]
    if later:  # by depth 4 the medians of depths 1 and 2 are in the progress (and 4's, from its second run)
        assert [p['depth'] for p in later[-1]['progress']['points']][:2] == [1, 2]
    result = last['result']
    assert [p['depth'] for p in result['curve']] == [1, 2, 4] and result['repeats'] == 2 and result['ranks'] == 2
    assert result['knee']['per_rank'] in (1, 2, 4) and result['per_rank_depth'] == result['knee']['per_rank']
    assert len(result['commands']) == 1 + 3 * 2
    assert last['progress']['points'][-1]['depth'] == 2 or len(last['progress']['points']) >= 2
    assert os.listdir(str(bench)) == []  # scratch files removed
    assert os.listdir(store) == []  # the job collected
    rc, again = poll(capsys, store, out['job_id'], wait=0)
    assert rc == 1 and 'no job %s' % out['job_id'] in again['msg']


def test_a_failing_sweep_fails_the_poll_with_its_message(tmp_path, capsys):
    store = str(tmp_path / 'jobs')
    fake = tmp_path / 'fio'
    fake.write_text(u'#!/bin/sh\necho "fio: engine io_uring not loadable" >&2\nexit 1\n')
    fake.chmod(0o755)
    rc, out = start(capsys, store, directory=str(tmp_path), depths=[1], scratch_size='1M', size_per_point='1M',
                    fio_path=str(fake))
    assert rc == 0, out
    rc, last = follow(capsys, store, out['job_id'])[-1]
    assert rc == 1 and last['finished']
    assert last['msg'] == '%s: scratch layout: fio exited with 1: fio: engine io_uring not loadable' % out['job_id']
    assert last['result']['commands'] and os.listdir(store) == []


def test_cancel_ends_the_sweep_and_its_fio_and_removes_the_scratch(tmp_path, capsys):
    store = str(tmp_path / 'jobs')
    bench = tmp_path / 'bench'
    bench.mkdir()
    fake = tmp_path / 'fio'
    # The scratch layout "runs" for a minute: touch the scratch files fio would write, then wait.
    fake.write_text(u'#!/bin/sh\nfor a in "$@"; do case "$a" in --filename=*) touch "${a#--filename=}";; esac; done\n'
                    u'exec sleep 60\n')
    fake.chmod(0o755)
    rc, out = start(capsys, store, directory=str(bench), depths=[1], scratch_size='1M', size_per_point='1M',
                    fio_path=str(fake))
    assert rc == 0, out
    deadline = time.time() + 20
    while not os.listdir(str(bench)):
        assert time.time() < deadline, 'the sweep never started its fio'
        time.sleep(0.1)
    rc, cancelled = poll(capsys, store, out['job_id'], cancel=True)
    assert rc == 0 and cancelled['cancelled'] is True and cancelled['finished'] is True, cancelled
    assert os.listdir(store) == []
    deadline = time.time() + 15
    while os.listdir(str(bench)):  # the sweep's SIGTERM cleanup removes its scratch files
        assert time.time() < deadline, os.listdir(str(bench))
        time.sleep(0.1)
