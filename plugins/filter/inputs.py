# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared checkpoint_io_* variables checked against their types and limits (documented in
checkpoint_io_inputs.yml beside this file); the table and the checks are in module_utils/inputs.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fio_job import heartbeat_for
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.inputs import check_inputs


def checkpoint_io_inputs(given):
    """``{name: value} | ai_storage.checkpoint_io.checkpoint_io_inputs``: {errors, values} (defaults filled in)."""
    if not isinstance(given, dict):
        raise AnsibleFilterError('checkpoint_io_inputs: %r is not a dict of variables' % (given,))
    return check_inputs(dict(given))


def job_heartbeat(poll, hosts=1, forks=5):
    """``poll | ai_storage.checkpoint_io.job_heartbeat(ansible_play_hosts_all | length, forks)``: a background job's
    heartbeat (module_utils/fio_job.py heartbeat_for)."""
    try:
        return heartbeat_for(poll, hosts, forks)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('job_heartbeat: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'checkpoint_io_inputs': checkpoint_io_inputs, 'job_heartbeat': job_heartbeat}
