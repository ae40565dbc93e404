# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests only: count the gathers of each play - the tasks that ran checkpoint_io_facts, or checkpoint_io_plan (whose
action runs the facts module once) - per host, and append the run's counts to the JSON list in
``CHECKPOINT_IO_FACTS_COUNT`` when the run ends: [{"plays": [[play name, {host: n}], ...]}, ...] (one element per
ansible-playbook run). The one_run scenario reads it (issue 32: the facts run at most once per play)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = '''
name: count_facts
type: aggregate
short_description: Count the facts gathers of each play (tests only)
description:
  - Appends the number of checkpoint_io_facts and checkpoint_io_plan runs per play and host to the JSON list in the
    file C(CHECKPOINT_IO_FACTS_COUNT).
'''

import json
import os

from ansible.plugins.callback import CallbackBase

GATHERS = ('checkpoint_io_facts', 'checkpoint_io_plan')


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'count_facts'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.plays = []

    def v2_playbook_on_play_start(self, play):
        self.plays.append([play.get_name(), {}])

    def _count(self, result):
        action = result._task.action or ''
        if self.plays and action.split('.')[-1] in GATHERS:
            counts = self.plays[-1][1]
            host = result._host.get_name()
            counts[host] = counts.get(host, 0) + 1

    def v2_runner_on_ok(self, result):
        self._count(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result)

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get('CHECKPOINT_IO_FACTS_COUNT')
        if not path:
            return
        runs = []
        if os.path.exists(path):
            with open(path) as handle:
                runs = json.load(handle)
        runs.append({'plays': [play for play in self.plays if play[1]]})
        with open(path, 'w') as handle:
            json.dump(runs, handle, indent=1)
