# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared checkpoint_io_* variables checked against their types and limits (documented in
checkpoint_io_inputs.yml beside this file); the table and the checks are in module_utils/common/inputs.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_job import heartbeat_for
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import (
    batches_group as _batches_group,
    check_inputs,
    run_batches as _run_batches,
)


def checkpoint_io_inputs(given):
    """``{name: value} | ai_storage.checkpoint_io.checkpoint_io_inputs``: {errors, values} (defaults filled in)."""
    if not isinstance(given, dict):
        raise AnsibleFilterError('checkpoint_io_inputs: %r is not a dict of variables' % (given,))
    return check_inputs(dict(given))


def job_heartbeat(poll, hosts=1, forks=5):
    """``poll | ai_storage.checkpoint_io.job_heartbeat(ansible_play_hosts_all | length, forks)``: a background job's
    heartbeat (module_utils/verify/fio_job.py heartbeat_for)."""
    try:
        return heartbeat_for(poll, hosts, forks)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('job_heartbeat: %s' % exc)


def batches_group(values):
    """``checkpoint_io_inputs['values'] | ai_storage.checkpoint_io.batches_group``: the group that carries the run's
    canary batches to the later plays' keywords."""
    if not isinstance(values, dict):
        raise AnsibleFilterError('batches_group: %r is not the checked checkpoint_io_* values' % (values,))
    return _batches_group(values)


def run_batches(groups, keyword, given=None):
    """``groups | ai_storage.checkpoint_io.run_batches('serial', checkpoint_io_serial | default(none))``: a play
    keyword of the run's canary batches (an extra variable, else the first play's group, else the default)."""
    if keyword not in ('serial', 'max_fail_percentage'):
        raise AnsibleFilterError('run_batches: %r is not serial or max_fail_percentage' % (keyword,))
    return _run_batches(groups, keyword, given)


class FilterModule(object):
    def filters(self):
        return {'checkpoint_io_inputs': checkpoint_io_inputs, 'job_heartbeat': job_heartbeat,
                'batches_group': batches_group, 'run_batches': run_batches}
