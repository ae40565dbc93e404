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
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def playbook(name, extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STRATEGY='linear',
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR='1')
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    extra = dict(extra, checkpoint_io_hosts='localhost', ansible_connection='local')
    return subprocess.run([binary, '-i', 'localhost,', '--check', os.path.join(ROOT, 'playbooks', name),
                           '-e', json.dumps(extra)], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize('name', ['tune_checkpoint_nodes.yml', 'verify_checkpoint_write.yml'])
@pytest.mark.parametrize('value, message', [
    (0, 'checkpoint_io_verify_ranks: 0 is below the minimum 1'),
    ('abc', "checkpoint_io_verify_ranks: 'abc' is not an integer (1 to 1024)"),
])
def test_bad_verify_ranks_refused_first(name, value, message):
    proc = playbook(name, {'checkpoint_io_verify_ranks': value})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert message in out and 'nothing was changed' in out, out[-3000:]
    assert 'Gather every layer' not in out and 'Settle the directories' not in out, out[-3000:]
    assert 'ok=' in out and 'changed=0' in out
