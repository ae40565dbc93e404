# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""checkpoint_write end to end with the real fio of the test host, on small shards in a tmp dir.

O_DIRECT is refused by some tmp filesystems (tmpfs, some overlays: EINVAL) and io_uring by some
containers: the probes below switch to direct: false / psync where the host needs it, the tests still run.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_write

from helpers import FIO, checkpoint_dirs as dirs, fio_capabilities, run_fio_module

MIB = 1024 * 1024
STATE = {}


@pytest.fixture(autouse=True)
def state_dir(tmp_path):
    """Each test's own state store (the run directories are recorded there)."""
    STATE['dir'] = str(tmp_path / 'state')
    yield STATE['dir']
    # Whatever a test did, no run directory stays recorded.
    assert state_store.read_record(STATE['dir'], 'scratch') is None if os.path.isdir(STATE['dir']) else True


@pytest.fixture(scope='module')
def host(tmp_path_factory):
    """{'ioengine', 'direct'} this host's tmp filesystem and kernel accept (io_uring and O_DIRECT when they work)."""
    return fio_capabilities(tmp_path_factory.mktemp('probe'))


def run(capsys, **params):
    params.setdefault('state_dir', STATE['dir'])
    return run_fio_module(capsys, checkpoint_write.main, params)


def write_through_first_file(body=u'bs=1M count=4'):
    """A stand-in fio's shell lines that write into the first --filename it is given (a /proc/self/fd name)."""
    return (u'for a in "$@"; do case "$a" in --filename=*) dd if=/dev/zero of="${a#--filename=}" %s conv=notrunc '
            u'2>/dev/null; break;; esac; done\n' % body)


def test_two_ranks_real_fio(tmp_path, host, capsys):
    directories = dirs(tmp_path)
    rc, out = run(capsys, directories=directories, ranks=2, shard_size='8M', queue_depth=4, label='before', **host)
    assert rc == 0, out
    assert out['changed'] is False
    assert out['label'] == 'before'
    assert out['ranks'] == 2 and out['queue_depth'] == 4 and out['block_size'] == MIB
    assert out['shard_bytes'] == 8 * MIB and out['total_bytes'] == 16 * MIB
    assert out['total_gib'] == pytest.approx(16.0 / 1024)
    assert out['ioengine'] == host['ioengine'] and out['direct'] is host['direct'] and out['fsync'] is True
    ranks = out['per_rank']
    # Each shard in a directory made for the run, root-only, in its checkpoint directory; fio got descriptors.
    assert [os.path.basename(r['filename']) for r in ranks] == ['rank_0.ckpt', 'rank_1.ckpt']
    assert [os.path.dirname(os.path.dirname(r['filename'])) for r in ranks] == directories
    assert all(os.path.basename(os.path.dirname(r['filename'])).startswith('.checkpoint_io.before.') for r in ranks)
    assert sorted(out['safety']['run_dirs']) == sorted(os.path.dirname(r['filename']) for r in ranks)
    names = [a for a in out['command'] if a.startswith('--filename=')]
    assert len(names) == 2 and all(re.match(r'^--filename=/proc/self/fd/[0-9]+$', a) for a in names)
    assert '--thread' in out['command'] and '--fallocate=none' in out['command']
    assert all(r['bytes'] == 8 * MIB and r['seconds'] > 0 and r['bw_bytes'] > 0 for r in ranks)
    assert out['duration_s'] == max(r['seconds'] for r in ranks)
    assert out['throughput_gib_s'] == pytest.approx(16 * MIB / out['duration_s'] / 1024 ** 3)
    assert out['min_rank_bw_bytes'] == min(r['bw_bytes'] for r in ranks)
    assert out['wall_s'] >= out['duration_s']
    assert out['fio_version'].startswith('fio-')
    assert len(out['iodepth_max_achieved']) == 2
    assert out['command'][:4] == [FIO, '--output-format=json', '--thread', '--rw=write']
    assert '--end_fsync=1' in out['command'] and '--iodepth=4' in out['command']
    assert len(out['devices']) == 2 and out['devices'][0] == out['devices'][1]  # both in one tmp filesystem
    # shards and run directories removed (keep_files false)
    assert os.listdir(directories[0]) == [] and os.listdir(directories[1]) == []
    assert out['files_kept'] == []


def test_total_size_keep_files_and_progress(tmp_path, host, capsys):
    directory = dirs(tmp_path, 1)
    progress = str(tmp_path / 'progress.json')
    rc, out = run(capsys, directories=directory, ranks=3, total_size='25M', keep_files=True, progress_file=progress,
                  progress_interval=0.05, **host)
    assert rc == 0, out
    assert out['shard_bytes'] == 8 * MIB and out['total_bytes'] == 24 * MIB  # 25 MiB / 3 rounded down to 1 MiB
    kept_dir = os.path.join(directory[0], os.listdir(directory[0])[0])
    assert os.listdir(directory[0]) == [os.path.basename(kept_dir)]
    assert sorted(os.listdir(kept_dir)) == ['rank_0.ckpt', 'rank_1.ckpt', 'rank_2.ckpt']
    assert sorted(out['files_kept']) == [os.path.join(kept_dir, 'rank_%d.ckpt' % n) for n in range(3)]
    assert all(os.path.getsize(p) == 8 * MIB for p in out['files_kept'])
    with open(progress) as handle:
        doc = json.load(handle)
    assert doc['done'] is True
    assert doc['bytes_written'] == doc['total_bytes'] == 24 * MIB
    assert doc['elapsed_s'] > 0 and doc['bw_bytes_so_far'] > 0
    assert [name for name in os.listdir(str(tmp_path)) if name.startswith('.progress.')] == []

    # a second run writes its own shards and removes them; the kept ones are not its own: left alone
    rc, out = run(capsys, directories=directory, ranks=3, total_size='25M', **host)
    assert rc == 0, out
    assert os.listdir(directory[0]) == [os.path.basename(kept_dir)]
    assert sorted(os.listdir(kept_dir)) == ['rank_0.ckpt', 'rank_1.ckpt', 'rank_2.ckpt']


def test_the_restore_read_reads_every_shard_back(tmp_path, host, capsys):
    directories = dirs(tmp_path)
    rc, out = run(capsys, directories=directories, ranks=2, shard_size='8M', queue_depth=4, read_back=True, **host)
    assert rc == 0, out
    restore = out['restore']
    # every rank read its whole shard, through the run's own descriptors, with the write's block size and depth
    assert restore['total_bytes'] == 16 * MIB and [r['bytes'] for r in restore['per_rank']] == [8 * MIB, 8 * MIB]
    assert restore['duration_s'] == max(r['seconds'] for r in restore['per_rank'])
    assert restore['throughput_gib_s'] == pytest.approx(16 * MIB / restore['duration_s'] / 1024 ** 3)
    read = out['read_command']
    assert '--rw=read' in read and '--bs=1048576' in read and '--iodepth=4' in read and '--end_fsync=1' not in read
    assert [a for a in read if a.startswith('--filename=')] == [a for a in out['command'] if a.startswith('--filename=')]
    # the write's own figures are the write's; the run's files are gone as after any run
    assert out['total_bytes'] == 16 * MIB and out['throughput_gib_s'] > 0
    assert [os.listdir(d) for d in directories] == [[], []]


def test_a_failed_restore_read_fails_the_run_saying_the_write_went_through(tmp_path, capsys):
    directory = dirs(tmp_path, 1)
    fake = tmp_path / 'fio'
    # writes as the real one would be asked to, then fails the read
    fake.write_text(u'#!/bin/sh\ncase "$*" in *--rw=read*) echo "fio: read error: Input/output error" >&2; exit 1;; '
                    u'esac\nexec %s "$@"\n' % FIO)
    fake.chmod(0o755)
    rc, out = run(capsys, directories=directory, ranks=1, shard_size='1M', fio_path=str(fake), read_back=True,
                  direct=False, ioengine='psync')
    assert rc == 1, out
    assert out['msg'] == ('the checkpoint was written, then its restore read failed: fio exited with 1: fio: read '
                          'error: Input/output error')
    assert out['throughput_gib_s'] > 0 and out['restore'] is None
    assert os.listdir(directory[0]) == []


@pytest.mark.parametrize('params, message', [
    (dict(ranks=2, shard_size='1M', runtime=5, read_back=True),
     'read_back: a restore read needs whole shards, and runtime 5 may end the write before them'),
    (dict(ranks=2, shard_size='6M', block_size='4M'),
     "shard_size: '6M' (6291456 bytes) is not a multiple of block_size 4194304 bytes"),
    (dict(ranks=16, total_size='8M'), 'over 16 ranks is 524288 bytes per rank, below block_size 1048576 bytes'),
    (dict(ranks=2, shard_size='1M', queue_depth=0), 'queue_depth: 0 is below the minimum 1'),
    (dict(ranks=2000, shard_size='1M'), 'ranks: 2000 is above the maximum 1024'),
    (dict(ranks=2, shard_size='1M', block_size=1000), 'block_size: 1000 (1000 bytes) is not a multiple of 4096'),
    (dict(ranks=2, shard_size='1M', free_space_margin=1.5), 'free_space_margin: 1.5 is out of range'),
    (dict(ranks=2, shard_size='1T'), 'not enough free space'),
    (dict(ranks=2), 'one of the following is required: shard_size, total_size'),
    (dict(ranks=2, shard_size='1M', free_space_margin='nan'), "free_space_margin: 'nan' is not a finite number"),
    (dict(ranks=2, shard_size='1M', free_space_margin=True), 'free_space_margin: True is not a number'),
    (dict(ranks=2, shard_size='1M', progress_file='/tmp', progress_interval=1),
     'progress_file: /tmp is a directory, not a file'),
    (dict(ranks=2, shard_size='1M', progress_file='/tmp/' + 'n' * 250), 'its file name is 250 bytes long'),
    (dict(ranks=2, shard_size='1M', progress_file='/tmp/p.json', progress_interval=True),
     'progress_interval: True is not a number'),
    (dict(ranks=2, shard_size='1M', background=True, job_store='relative/jobs'),
     "job_store: 'relative/jobs' is not an absolute directory path below /"),
    (dict(ranks=2, shard_size='1M', background=True, job_store='/tmp/' + 'n' * 300),
     'has a name of 300 bytes'),
])
def test_refused_before_anything_is_written(tmp_path, capsys, params, message):
    directory = dirs(tmp_path, 1)
    rc, out = run(capsys, directories=directory, **params)
    assert rc == 1 and message in out['msg'], out
    assert os.listdir(directory[0]) == []
    assert 'command' not in out


def test_an_empty_device_list_is_refused_naming_devices(capsys):
    rc, out = run(capsys, devices=[], ranks=1, shard_size='1M')
    assert rc == 1 and out['msg'] == 'devices: [] is not a non-empty list of absolute block devices', out


def test_free_space_message_names_bytes(tmp_path, capsys):
    directory = dirs(tmp_path, 1)
    rc, out = run(capsys, directories=directory, ranks=2, shard_size='1T')
    assert rc == 1
    assert 'needs %d bytes, free space is ' % (2 * 1024 ** 4) in out['msg']
    assert '(free_space_margin 0.1)' in out['msg']


def test_missing_directory_and_missing_fio(tmp_path, capsys):
    rc, out = run(capsys, directories=[str(tmp_path / 'nope')], ranks=1, shard_size='1M')
    assert rc == 1 and out['msg'] == 'directories: %s does not exist' % (tmp_path / 'nope')
    rc, out = run(capsys, directories=[str(tmp_path / 'nope' / 'deeper')], ranks=1, shard_size='1M')
    assert rc == 1 and out['msg'] == 'directories: %s does not exist (at %s)' % (
        tmp_path / 'nope' / 'deeper', tmp_path / 'nope')
    afile = tmp_path / 'file'
    afile.write_text(u'x')
    rc, out = run(capsys, directories=[str(afile)], ranks=1, shard_size='1M')
    assert rc == 1 and 'is not a directory' in out['msg']
    rc, out = run(capsys, directories=dirs(tmp_path, 1), ranks=1, shard_size='1M', fio_path=str(tmp_path / 'fio'))
    assert rc == 1 and out['msg'] == 'fio_path: %s is not an executable file' % (tmp_path / 'fio')


def test_fio_failure_reports_stderr_and_cleans_up(tmp_path, capsys):
    directory = dirs(tmp_path, 1)
    fake = tmp_path / 'fio'
    fake.write_text(u'#!/bin/sh\n' + write_through_first_file() +
                    u'echo "fio: engine io_uring not loadable" >&2\nexit 1\n')
    fake.chmod(0o755)
    rc, out = run(capsys, directories=directory, ranks=1, shard_size='1M', fio_path=str(fake))
    assert rc == 1
    assert out['msg'] == 'fio exited with 1: fio: engine io_uring not loadable'
    assert os.listdir(directory[0]) == []


def test_timeout_kills_fio(tmp_path, capsys):
    directory = dirs(tmp_path, 1)
    fake = tmp_path / 'fio'
    fake.write_text(u'#!/bin/sh\nexec sleep 30\n')
    fake.chmod(0o755)
    rc, out = run(capsys, directories=directory, ranks=1, shard_size='1M', fio_path=str(fake), timeout=1)
    assert rc == 1 and out['msg'] == 'fio ran past timeout 1 s and was killed'


def test_progress_while_fio_runs(tmp_path, capsys, monkeypatch):
    """A stand-in fio writes half a shard, waits, then prints a real fio 3.33 result: the progress file follows."""
    from testenv import FIXTURES
    directories = dirs(tmp_path)
    fake = tmp_path / 'fio'
    fake.write_text(u'#!/bin/sh\n' + write_through_first_file() + u'sleep 1\ncat "%s"\n' % os.path.join(
        FIXTURES, 'fio', 'fio-3.33_ckpt_write_2ranks_8m_qd8_iouring_fsync.json'))
    fake.chmod(0o755)
    seen = []
    original = checkpoint_write.write_progress

    def spy(path, doc):
        seen.append(dict(doc))
        original(path, doc)
    monkeypatch.setattr(checkpoint_write, 'write_progress', spy)
    progress = str(tmp_path / 'progress.json')
    rc, out = run(capsys, directories=directories, ranks=2, shard_size='8M', fio_path=str(fake),
                  progress_file=progress, progress_interval=0.2)
    assert rc == 0, out
    assert seen[0] == {'elapsed_s': 0.0, 'bytes_written': 0, 'total_bytes': 16 * MIB, 'bw_bytes_so_far': 0,
                       'done': False}
    running = list(seen[1:-1])
    assert running and all(doc['done'] is False for doc in running)
    assert running[-1]['bytes_written'] == 4 * MIB and running[-1]['bw_bytes_so_far'] > 0
    assert seen[-1]['done'] is True and seen[-1]['bytes_written'] == 16 * MIB
    with open(progress) as handle:
        assert json.load(handle) == seen[-1]
    assert out['throughput_bytes_s'] == int(16 * MIB / 0.013)
    assert os.listdir(directories[0]) == []
