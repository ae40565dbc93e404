# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests only: SIGKILL the whole ansible-playbook run the moment a named task has succeeded on a host.

The xfs scenario's interruption tests (tests/test_3_interrupted.py) start ansible-playbook in a session of its own
with this callback enabled and ``XFS_KILL_AFTER`` set to (a part of) a task name. When that task's result
arrives (ok or changed; not skipped, not failed), the callback prints ``KILLED AFTER: <task>`` and kills the
run's process group: the controller, its workers and its connections die before the next task is sent, so the
node is left exactly as that step left it, the way a controller crash or a lost connection leaves it.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = '''
name: kill_after
type: aggregate
short_description: Kill the run right after a named task succeeded (tests only)
description:
  - When the task whose name contains the environment variable C(XFS_KILL_AFTER) succeeds, print
    C(KILLED AFTER) and the task name, and SIGKILL the process group of ansible-playbook.
requirements:
  - ansible-playbook started in a session of its own (the test's runner does).
'''

import os
import signal
import sys

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'kill_after'
    CALLBACK_NEEDS_ENABLED = True

    def v2_runner_on_ok(self, result):
        wanted = os.environ.get('XFS_KILL_AFTER')
        name = result._task.get_name()
        if not wanted or wanted not in name:
            return
        sys.stdout.write('\nKILLED AFTER: %s\n' % name)
        sys.stdout.flush()
        os.killpg(os.getpgrp(), signal.SIGKILL)
