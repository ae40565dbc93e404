# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fastpersist_write end to end: DeepSpeed itself writes and reads back a small checkpoint in a tmp dir through
FastFileWriter, one process per rank, with the Python of a training environment (tests/integration/training_env.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import fastpersist_write

from helpers import checkpoint_dirs as dirs, run_module
from training_env import EXTENSIONS, training_python

MIB = 1024 * 1024


@pytest.fixture(scope='module')
def python():
    """The training environment's Python (torch and DeepSpeed)."""
    return training_python()


def run(capsys, tmp_path, **params):
    params.setdefault('state_dir', str(tmp_path / 'state'))
    params.setdefault('torch_extensions_dir', EXTENSIONS)
    params.setdefault('timeout', 1200)
    return run_module(capsys, fastpersist_write.main, params)


def test_deepspeed_writes_and_reads_back_two_ranks(tmp_path, capsys, python):
    directories = dirs(tmp_path, 2)
    rc, out = run(capsys, tmp_path, python=python, directories=directories, ranks=2, total_size='16M',
                  aio={'block_size': '256K', 'queue_depth': 4}, writer={'io_buffer_size': '4M'}, label='after')
    assert rc == 0, out.get('msg', out)
    ds = out['deepspeed']
    # DeepSpeed's own parsers completed the sections: what was given, DeepSpeed's defaults for the rest
    assert ds['aio']['block_size'] == 262144 and ds['aio']['queue_depth'] == 4
    assert ds['aio']['intra_op_parallelism'] == 1 and ds['writer']['type'] == 'FAST'
    assert ds['writer']['io_buffer_size'] == 4 * MIB and ds['writer']['io_buffer_double'] is True
    assert ds['path'] == 'fast_file_writer' and ds['accelerator'] == 'cpu' and ds['version']
    # every rank saved its 8 MiB state dict (a little more on disk: torch.save's zip framing)
    assert out['shard_bytes'] == 8 * MIB and len(out['per_rank']) == 2
    for rank in out['per_rank']:
        assert rank['payload_bytes'] == 8 * MIB and 8 * MIB <= rank['bytes'] < 8 * MIB + 65536
        assert rank['seconds'] > 0 and rank['writer_stats']['aio_bytes'] > 0
    assert [os.path.dirname(os.path.dirname(r['filename'])) for r in out['per_rank']] == directories
    assert out['duration_s'] == pytest.approx(max(r['seconds'] for r in out['per_rank']), rel=1e-3)
    assert out['throughput_gib_s'] == pytest.approx(out['total_bytes'] / out['duration_s'] / 1024 ** 3, rel=1e-3)
    # read back with the aio handle, the bytes and tensors checked
    restore = out['restore']
    assert restore['total_bytes'] == out['total_bytes'] and restore['duration_s'] > 0
    assert [r['bytes'] for r in restore['per_rank']] == [r['bytes'] for r in out['per_rank']]
    # the script ran from the run directory through the module's descriptor; nothing is left behind
    assert out['command'][0] == python and out['command'][1].endswith('/fastpersist_worker.py')
    assert out['command'][1].startswith('/proc/')
    assert [os.listdir(d) for d in directories] == [[], []]
    assert state_store.read_record(str(tmp_path / 'state'), 'scratch') is None


def test_repeats_write_and_read_back_in_the_same_processes(tmp_path, capsys, python):
    directories = dirs(tmp_path, 1)
    rc, out = run(capsys, tmp_path, python=python, directories=directories, ranks=2, total_size='8M',
                  aio={'block_size': '256K', 'queue_depth': 8}, repeats=3, label='repeats')
    assert rc == 0, out.get('msg', out)
    runs = out['runs']
    assert len(runs) == 3 and all(r['throughput_gib_s'] > 0 and r['restore']['throughput_gib_s'] > 0 for r in runs)
    # each run its own: the slowest rank's time of that run; the top level is the last run's
    assert len(set(r['duration_s'] for r in runs)) > 1
    assert out['duration_s'] == runs[-1]['duration_s'] and out['restore']['duration_s'] == runs[-1]['restore']['duration_s']
    assert all(r['total_bytes'] == out['total_bytes'] for r in runs)
    assert [os.listdir(d) for d in directories] == [[]]


def test_settings_deepspeed_refuses_fail_naming_them_and_leave_nothing(tmp_path, capsys, python):
    directory = dirs(tmp_path, 1)
    # a double buffer of 6 KiB cannot be halved into 512-byte aligned halves x 4 threads: DeepSpeed would assert
    rc, out = run(capsys, tmp_path, python=python, directories=directory, total_size='1M',
                  aio={'block_size': '4K', 'intra_op_parallelism': 4}, writer={'io_buffer_size': 6144},
                  read_back=False)
    assert rc == 1 and out['msg'].startswith('DeepSpeed refused the settings: writer.io_buffer_size 6144 is not a '
                                             'positive multiple of 4096'), out['msg']
    assert os.listdir(directory[0]) == []


@pytest.mark.parametrize('params, message', [
    (dict(python='python3'), "python: 'python3' is not an absolute path"),
    (dict(python='/nonexistent/python'), 'python: /nonexistent/python is not an executable file on this node'),
    (dict(ranks=0), 'ranks: 0 is below the minimum 1'),
    (dict(total_size='1K'), 'below block_size'),
    (dict(aio={'block_size': 1000}), 'aio.block_size: 1000 bytes is not a multiple of 4096'),
    (dict(aio={'queue_depth': 0}), 'aio.queue_depth: 0 is below the minimum 1'),
    (dict(writer={'io_buffer_size': 'big'}), 'writer.io_buffer_size'),
    (dict(total_size='900T'), 'not enough free space'),
])
def test_refused_before_anything_is_made(tmp_path, capsys, python, params, message):
    directory = dirs(tmp_path, 1)
    args = dict(python=python, directories=directory, total_size='8M')
    args.update(params)
    rc, out = run(capsys, tmp_path, **args)
    assert rc == 1 and message in out['msg'], out['msg']
    assert os.listdir(directory[0]) == [] and 'command' not in out


def test_a_training_environment_another_user_can_change_is_refused(tmp_path, capsys, python):
    """Root would run the interpreter and load the ops: a venv or an op cache another user can change is code that
    user would run as root."""
    directory = dirs(tmp_path, 1)
    shared = tmp_path / 'shared'
    shared.mkdir()
    shared.chmod(0o777)  # not sticky: anyone can swap its entries
    link = shared / 'python'
    link.symlink_to(python)
    rc, out = run(capsys, tmp_path, python=str(link), directories=directory, total_size='4M')
    assert rc == 1 and out['msg'].startswith('python: %s: %s (everyone) can be changed by another user than root'
                                             % (link, shared)), out['msg']
    rc, out = run(capsys, tmp_path, python=python, directories=directory, total_size='4M',
                  torch_extensions_dir=str(shared / 'ops'))
    assert rc == 1 and 'torch_extensions_dir: %s/ops: %s (everyone) can be changed' % (shared, shared) in out['msg']
    assert os.listdir(directory[0]) == []


def test_a_python_without_deepspeed_says_so(tmp_path, capsys):
    directory = dirs(tmp_path, 1)
    bare = '/usr/bin/python3'  # Debian's, without torch and DeepSpeed
    rc, out = run(capsys, tmp_path, python=bare, directories=directory, total_size='4M')
    assert rc == 1 and out['msg'].startswith('DeepSpeed cannot write here: cannot import torch and deepspeed'), out
    assert os.listdir(directory[0]) == []
