# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checkpoint planner filter (documented in checkpoint_plan.yml beside this file); the logic is in
module_utils/fleet/planner.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import planner as _planner


def checkpoint_plan(checkpoint, ranks_per_node=None, window_s=None, drive_mib_s=None, latency_ms=None,
                    block_size='1M', nodes=None, now_mib_s=None, tuned_mib_s=None, drives_per_node=None,
                    mtbf_hours=None, accelerators_per_node=None, drive_tbw=None, drive_dwpd=None, drive_capacity=None,
                    warranty_years=5, interval_s=None):
    """``'llama3-70b' | ai_storage.checkpoint_io.checkpoint_plan(ranks_per_node=8, window_s=60, ...)``."""
    try:
        return _planner.plan(checkpoint, ranks_per_node, window_s, drive_mib_s, latency_ms, block_size=block_size,
                             nodes=nodes, now_mib_s=now_mib_s, tuned_mib_s=tuned_mib_s,
                             drives_per_node=drives_per_node, mtbf_hours=mtbf_hours,
                             accelerators_per_node=accelerators_per_node, drive_tbw=drive_tbw, drive_dwpd=drive_dwpd,
                             drive_capacity=drive_capacity, warranty_years=warranty_years, interval_s=interval_s)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('checkpoint_plan: %s' % exc)


class FilterModule(object):
    """Checkpoint planner filters."""

    def filters(self):
        return {'checkpoint_plan': checkpoint_plan}
