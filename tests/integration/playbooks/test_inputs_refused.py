# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real playbooks refuse bad checkpoint_io_* values in their first task, before anything is gathered or written.

Runs playbooks/tune_checkpoint_nodes.yml and playbooks/verify_checkpoint_write.yml on this machine (connection
local) in check mode, so that nothing could change here even if the check let a value through.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import pytest

from helpers import run_playbook

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def playbook(name, extra):
    extra = dict(extra, checkpoint_io_hosts='localhost')
    return run_playbook(os.path.join(ROOT, 'playbooks', name), '--check', '-e', json.dumps(extra))


@pytest.mark.parametrize('name', ['tune_checkpoint_nodes.yml', 'verify_checkpoint_write.yml'])
@pytest.mark.parametrize('value, message', [
    (0, 'checkpoint_io_verify_ranks: 0 is below the minimum 1'),
    ('abc', "checkpoint_io_verify_ranks: 'abc' is not an integer (1 to 1024)"),
])
def test_bad_verify_ranks_refused_first(name, value, message):
    rc, out = playbook(name, {'checkpoint_io_verify_ranks': value})
    assert rc != 0, out[-3000:]
    assert message in out and 'nothing was changed' in out, out[-3000:]
    assert 'Gather every layer' not in out and 'Settle the directories' not in out, out[-3000:]
    assert 'ok=' in out and 'changed=0' in out


@pytest.mark.parametrize('extra, message', [
    ({'checkpoint_io_data_drives': {'serials': ['NOSUCH0001']}},
     'checkpoint_io_data_drives names serial NOSUCH0001, which is no NVMe drive on this node'),
    ({'checkpoint_io_data_drives': {'serials': ['NOSUCH0001']}, 'checkpoint_io_xfs': True,
      'xfs_label': u'ckpt\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9'},
     u"xfs_label: 'ckpt\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9' must be at most 12 bytes"),
    ({}, 'checkpoint_io_data_drives is not set'),
    # finding 7: a force list that names no drive of the node (a misspelt serial) stops the run before the baseline's
    # raw write and every role
    ({'checkpoint_io_data_drives': {'models': ['^NONE$']}, 'checkpoint_io_xfs': True, 'xfs_force': ['DATA00O1']},
     'xfs_force names DATA00O1, which is none of the drives'),
])
def test_a_selection_or_a_setting_that_cannot_work_here_stops_the_first_play(tmp_path, extra, message):
    """Issue 31, findings 11 and 17: a misspelt serial, an unset selection, a label over its byte limit are refused
    in the first play against the node's facts, before any role runs (earlier, the gds and io_uring plays changed
    the node first). Not in check mode: what the run leaves in its state directory is its lease only."""
    state = tmp_path / 'state'
    extra = dict(extra, checkpoint_io_hosts='localhost', checkpoint_io_state_dir=str(state),
                 checkpoint_io_baseline_measure=False)
    rc, out = run_playbook(os.path.join(ROOT, 'playbooks', 'tune_checkpoint_nodes.yml'), '-e', json.dumps(extra))
    assert rc != 0, out[-3000:]
    assert message in out and 'Nothing was changed' in out, out[-3000:]
    assert 'TASK [Check the drive selection and the volume' in out  # the first play's check said it
    assert 'Decide the GDS mode' not in out and 'io_uring_engine :' not in out, out[-3000:]  # no later play ran
    assert 'changed=0' in out
    assert sorted(os.listdir(str(state))) in ([], ['run_lease.json'], ['.lock', 'run_lease.json']), \
        os.listdir(str(state))
