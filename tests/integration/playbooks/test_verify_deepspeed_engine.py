# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verification with DeepSpeed writing (checkpoint_io_verify_engine): the real verify_checkpoint_write
playbook on this machine (connection local), the training environment's DeepSpeed (tests/integration/training_env.py)
writing and reading back both sides through its own FastPersist writer into an XFS on a loop device: "before" with
DeepSpeed's defaults (the settings found before tuning: no ds_config yet), "after" with the ds_config's tuned aio and
checkpoint.writer sections. About a minute (four DeepSpeed runs of 32 MiB, each ~10 s of start-up)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import pathlib

import pytest

from helpers import run_playbook
from loop_devices import xfs_checkpoint_dir
from training_env import EXTENSIONS, training_python

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(ROOT, 'playbooks', 'verify_checkpoint_write.yml')
MIB = 1024 * 1024
DS_CONFIG = {'train_batch_size': 8,
             'aio': {'block_size': 1048576, 'queue_depth': 16, 'intra_op_parallelism': 1},
             'checkpoint': {'writer': {'type': 'fast', 'io_buffer_size': 16 * MIB, 'io_buffer_double': True}}}


@pytest.fixture
def volume(tmp_path):
    """An XFS on a loop device mounted in tmp_path, a checkpoint directory in it."""
    with xfs_checkpoint_dir(tmp_path, 1024 * MIB) as (ckpt, device):
        yield pathlib.Path(ckpt), device


def test_deepspeed_writes_and_reads_back_both_sides_and_the_report_says_so(tmp_path, volume):
    python = training_python()
    ckpt, device = volume
    ds_config = tmp_path / 'ds_config.json'
    ds_config.write_text(json.dumps(DS_CONFIG))
    before_text = ds_config.read_text()
    extra = {'checkpoint_io_hosts': 'localhost', 'checkpoint_io_verify_dirs': [str(ckpt)],
             'checkpoint_io_state_dir': str(tmp_path / 'state'), 'checkpoint_io_report_dir': str(tmp_path / 'reports'),
             'checkpoint_io_deepspeed_python': python, 'checkpoint_io_verify_engine': 'deepspeed',
             'checkpoint_io_deepspeed_configs': [str(ds_config)],
             'checkpoint_io_verify_total_size': '32M', 'checkpoint_io_verify_ranks': 1,
             'checkpoint_io_verify_repeats': 2,
             # the settings found before tuning: the node had no ds_config then (DeepSpeed's defaults)
             'checkpoint_io_before': {'deepspeed': {'configs': []}}}
    os.environ['TORCH_EXTENSIONS_DIR'] = EXTENSIONS  # the op bootstrap built; DeepSpeed's processes inherit it
    try:
        rc, out = run_playbook(PLAYBOOK, '-e', json.dumps(extra))
    finally:
        os.environ.pop('TORCH_EXTENSIONS_DIR', None)
    assert rc == 0, out[-4000:]
    assert "the checkpoints are written by DeepSpeed" in out
    report = json.loads((tmp_path / 'reports' / 'verify' / 'localhost.json').read_text())
    assert report['engine']['engine'] == 'deepspeed' and report['engine']['python'] == python
    # each side DeepSpeed's, with its own settings: defaults before, the ds_config's sections after
    assert report['before']['settings']['queue_depth'] == 8 and report['before']['settings']['writer'] == {}
    assert report['after']['settings']['queue_depth'] == 16
    assert report['after']['settings']['writer'] == {'io_buffer_size': 16 * MIB, 'io_buffer_double': True}
    assert report['same_settings'] is False and report['verdict'] in ('faster', 'slower', 'within noise')
    for side in ('before', 'after'):
        runs = report[side]['runs']
        assert len(runs) == 2 and all(run['throughput_gib_s'] > 0 and run['restore_gib_s'] > 0 for run in runs), runs
        assert report['restore'][side]['n'] == 2
    assert report['devices'] == [device]
    assert [f['id'] for f in report['findings']] == ['not_checked']  # a loop device: no NVMe queue to check
    assert '1 rank, written by DeepSpeed 0.19.8' in ' '.join(out.split())
    # the run directories are gone, the ds_config untouched (the verification changes nothing but scratch)
    assert os.listdir(str(ckpt)) == []
    assert ds_config.read_text() == before_text
