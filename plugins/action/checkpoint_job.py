# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin in front of the checkpoint_job module: waits for a background job one ``wait`` after another
inside one task, showing each wait's ``progress_line``.

Why here: a play that polls with one task per wait (and one to show the progress, and one to include itself again)
lists three tasks per wait in its recap, and each task is a round over every host. In one task the waits cost one.
But the linear strategy runs a task on ``--forks`` hosts at a time: a host beyond the forks would not be polled
until the hosts before it had finished waiting, and its job's heartbeat would end it. So the loop is only made when
every host of the play's batch has a fork of its own (``until_finished`` unset), or when asked; otherwise the
module waits once and the play includes its poll again, as before.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible import context
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

display = Display()

MODULE = 'ai_storage.checkpoint_io.checkpoint_job'


def loops(until_finished, batch, forks):
    """Whether one task waits until the job has ended: ``until_finished`` when given, else when the play's batch
    (``ansible_play_batch``) is no longer than the forks. A value that is no boolean waits once (the module
    refuses it, naming it)."""
    if until_finished is not None:
        try:
            return boolean(until_finished, strict=True)
        except TypeError:
            return False
    try:
        return len(batch or []) <= int(forks)
    except (TypeError, ValueError):
        return False


def done(out):
    """Whether no further wait is due: the job ended, or the module failed, skipped (check mode) or reaped."""
    return bool(out.get('failed') or out.get('finished') or out.get('skipped'))


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        # passed on to the module too, whose argument spec refuses a value that is no boolean
        loop = loops(args.get('until_finished'), task_vars.get('ansible_play_batch'), context.CLIARGS.get('forks'))
        host = task_vars.get('inventory_hostname', '')
        polls = 0
        while True:
            out = self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
            polls += 1
            if done(out):
                break
            if out.get('progress_line'):
                display.display('%s: %s' % (host, out['progress_line']))
            if not loop:
                break
        if out.get('job_id'):
            out['polls'] = polls
        result.update(out)
        return result
