# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-measure only when something changed (issue 34): the real verify_checkpoint_write playbook on this machine
(connection local) with fio writing into an XFS on a loop device, three times. The second run, nothing changed,
reuses the first's recorded result and writes nothing to the device (its /sys/block stat); the third, with the
ranks changed, measures again and says why. About 40 s (two measured runs of 2 x 32 MiB)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import pathlib

import pytest

from helpers import run_playbook
from loop_devices import xfs_checkpoint_dir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(ROOT, 'playbooks', 'verify_checkpoint_write.yml')
MIB = 1024 * 1024


@pytest.fixture
def volume(tmp_path):
    """An XFS on a loop device mounted in tmp_path, a checkpoint directory in it."""
    with xfs_checkpoint_dir(tmp_path, 512 * MIB) as (ckpt, device):
        yield pathlib.Path(ckpt), device


def _sectors_written(device):
    with open('/sys/block/%s/stat' % device) as handle:
        return int(handle.read().split()[6])


def test_a_second_run_reuses_the_verification_and_a_changed_setting_measures_again(tmp_path, volume):
    ckpt, device = volume
    extra = {'checkpoint_io_hosts': 'localhost', 'checkpoint_io_verify_dirs': [str(ckpt)],
             'checkpoint_io_state_dir': str(tmp_path / 'state'), 'checkpoint_io_report_dir': str(tmp_path / 'reports'),
             'checkpoint_io_verify_engine': 'fio', 'checkpoint_io_verify_total_size': '32M',
             'checkpoint_io_verify_ranks': 1, 'checkpoint_io_verify_repeats': 2, 'checkpoint_io_verify_restore': False,
             'checkpoint_io_before': {'deepspeed': {'configs': []}}}
    report = tmp_path / 'reports' / 'verify' / 'localhost.json'

    rc, out = run_playbook(PLAYBOOK, '-e', json.dumps(extra))
    assert rc == 0, out[-4000:]
    first = json.loads(report.read_text())
    assert 'reused' not in first and len(first['after']['runs']) == 2
    recorded = json.loads((tmp_path / 'state' / 'verification.json').read_text())
    assert recorded['data']['depends_on']['settings']['ranks'] == 1 and recorded['data']['measured_at']

    written = _sectors_written(device)
    rc, out = run_playbook(PLAYBOOK, '-e', json.dumps(extra))
    assert rc == 0, out[-4000:]
    second = json.loads(report.read_text())
    assert second['reused']['reuse'] is True, second.get('reused')
    assert second['reused']['reason'].startswith('reused: measured ' + recorded['data']['measured_at'])
    assert second['after'] == first['after'] and second['before'] == first['before']
    assert 'Write the checkpoint with the tuned settings' not in out
    # nothing written: XFS may log a few blocks (atime is off for the directory walk; the mount is quiet)
    assert (_sectors_written(device) - written) * 512 < MIB, _sectors_written(device) - written

    rc, out = run_playbook(PLAYBOOK, '-e', json.dumps(dict(extra, checkpoint_io_verify_ranks=2)))
    assert rc == 0, out[-4000:]
    third = json.loads(report.read_text())
    assert 'reused' not in third and third['ranks'] == 2
    assert 'verification measured: ranks 1 -> 2' in ' '.join(out.split()), out[-3000:]
