# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests only: inject lab faults (lab/nvmelab.py) in the middle of the thermal validation's sustained write.

The thermal_validate scenario's tests run a playbook with this callback enabled and ``THERMAL_INJECT`` set to a
JSON list of nvmelab argument lists (``[["throttle", "node1", "data2", "5"], ["critical-warning", "node1",
"data2", "2"]]``), ``THERMAL_INJECT_AFTER_S`` to the seconds of writing after which they fire and
``THERMAL_LAB_STATE`` to the lab's state directory. On the first result of the task "Poll the sustained write"
whose progress says the write has run that long, the callback runs them in order (each nvmelab call returns once
QEMU or nbdkit took the change) and prints ``INJECTED: ...``; the run goes on.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = '''
name: inject_fault
type: aggregate
short_description: Inject lab faults mid-write (tests only)
description:
  - When the sustained write of thermal_validate has run C(THERMAL_INJECT_AFTER_S) seconds, run the nvmelab
    commands of C(THERMAL_INJECT) against C(THERMAL_LAB_STATE), once.
'''

import json
import os
import subprocess
import sys

from ansible.plugins.callback import CallbackBase

TASK = 'Poll the sustained write'


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'inject_fault'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.fired = False

    def v2_runner_on_ok(self, result):
        if self.fired or TASK not in result._task.get_name():
            return
        progress = result._result.get('progress') or {}
        if result._result.get('finished') or progress.get('elapsed_s', 0) < float(
                os.environ.get('THERMAL_INJECT_AFTER_S', '0')):
            return
        self.fired = True
        lab = [sys.executable, os.environ['CHECKPOINT_IO_LAB']]
        for args in json.loads(os.environ.get('THERMAL_INJECT', '[]')):
            argv = lab + args[:1] + ['--state-dir', os.environ['THERMAL_LAB_STATE']] + args[1:]
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                  check=False, timeout=120)
            values = (progress.get('elapsed_s', 0), ' '.join(args), proc.returncode, proc.stdout.strip()[-300:])
            line = 'INJECTED at %.1f s: %s (rc %d) %s' % values
            sys.stdout.write('\n%s\n' % line)
        sys.stdout.flush()
