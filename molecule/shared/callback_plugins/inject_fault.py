# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests only: inject lab faults (lab/nvmelab.py) in the middle of the thermal validation's sustained write.

The thermal_validate scenario's tests (and the one_run scenario's converge) run a playbook with this callback
enabled and ``THERMAL_INJECT`` set to a
JSON list of nvmelab argument lists (``[["throttle", "node1", "data2", "5"], ["critical-warning", "node1",
"data2", "2"]]``), ``THERMAL_INJECT_AFTER_S`` to the seconds of writing after which they fire and
``THERMAL_LAB_STATE`` to the lab's state directory. When the task "Poll the sustained write" starts (the write
started just before it), a timer fires that many seconds later and runs them in order (each nvmelab call returns
once QEMU or nbdkit took the change), printing ``INJECTED: ...``; the run goes on. Not on the poll's results: its
action plugin waits for the whole write in one task, so the only result is the last one. A write that finished
first is left alone. ``THERMAL_CLEAR`` (optional, the same form) runs when the task "Give the validation's
verdict" starts, once per run: the fault lifted after the back-off reached the ds_config, so the verification that
follows writes on drives that no longer warn (a drive that warns while the checkpoint is written voids it).
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
  - When the thermal play's verdict starts, run those of C(THERMAL_CLEAR), once.
'''

import json
import os
import subprocess
import sys
import threading
import time

from ansible.plugins.callback import CallbackBase

TASK = 'Poll the sustained write'
CLEAR_TASK = "Give the validation's verdict"


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'inject_fault'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.timer = None
        self.started = None
        self.done = threading.Event()  # the write finished: nothing to inject any more
        self.cleared = False

    def v2_playbook_on_task_start(self, task, is_conditional):
        if CLEAR_TASK in task.get_name() and not self.cleared:
            self.cleared = True
            if self.timer is not None:
                self.timer.cancel()
            self._run(os.environ.get('THERMAL_CLEAR', '[]'), 'CLEARED')
            return
        if self.timer is not None or TASK not in task.get_name():
            return
        self.started = time.time()
        self.timer = threading.Timer(float(os.environ.get('THERMAL_INJECT_AFTER_S', '0')), self._inject)
        self.timer.daemon = True
        self.timer.start()

    def v2_runner_on_ok(self, result):
        if TASK in result._task.get_name() and result._result.get('finished'):
            self.done.set()

    def v2_playbook_on_stats(self, stats):
        if self.timer is not None:
            self.timer.cancel()

    def _inject(self):
        if self.done.is_set() or self.cleared:
            return
        self._run(os.environ.get('THERMAL_INJECT', '[]'), 'INJECTED')

    def _run(self, commands, what):
        lab = [sys.executable, os.environ['CHECKPOINT_IO_LAB']]
        for args in json.loads(commands):
            argv = lab + args[:1] + ['--state-dir', os.environ['THERMAL_LAB_STATE']] + args[1:]
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                  check=False, timeout=120)
            values = (what, time.time() - (self.started or time.time()), ' '.join(args), proc.returncode,
                      proc.stdout.strip()[-300:])
            sys.stdout.write('\n%s at %.1f s: %s (rc %d) %s\n' % values)
        sys.stdout.flush()
