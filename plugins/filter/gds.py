# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gds role's filters (documented in the .yml files of their names beside this file); the logic is in
module_utils/gds/gds_plan.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds import gds_plan as _plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section


def gds_inputs(values):
    """``{policy, mode, block_size, ranks, queue_depth, poll_mode} | ai_storage.checkpoint_io.gds_inputs``."""
    if not isinstance(values, dict):
        raise AnsibleFilterError('gds_inputs: %r is not a dict of variables' % (values,))
    return _plan.gds_errors(values.get('policy'), values.get('mode'), values.get('block_size'), values.get('ranks'),
                            values.get('queue_depth'), values.get('poll_mode'))


def gds_plan(facts, fstype, want, policy, block_size, ranks, depth, poll_mode=None, allow_compat=None):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.gds_plan(fstype, mode, policy, block, ranks, depth,
    poll_mode, allow_compat)``: the role's plan for the node."""
    try:
        gds = section(facts, 'gds', required=True)
        return _plan.role_plan(gds, fstype or None, want, policy, int(block_size), int(ranks), int(depth),
                               poll_mode, allow_compat)
    except (ValueError, TypeError, KeyError) as exc:
        raise AnsibleFilterError('gds_plan: %s' % exc)


class FilterModule(object):
    """GPUDirect Storage filters."""

    def filters(self):
        return {'gds_inputs': gds_inputs, 'gds_plan': gds_plan}
