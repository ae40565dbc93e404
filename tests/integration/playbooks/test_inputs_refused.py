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
