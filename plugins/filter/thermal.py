# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The thermal validation's filters (documented in the .yml files of their names beside this file); the logic is
in module_utils/thermal/thermal.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.thermal import thermal as _thermal


def _call(name, function, *args):
    try:
        return function(*args)
    except (ValueError, TypeError, KeyError) as exc:
        raise AnsibleFilterError('%s: %s' % (name, exc))


def thermal_inputs(values):
    """``{name: value} | ai_storage.checkpoint_io.thermal_inputs``: messages of the policy values out of range."""
    if not isinstance(values, dict):
        raise AnsibleFilterError('thermal_inputs: %r is not a dict of variables' % (values,))
    return _call('thermal_inputs', _thermal.policy_errors, dict(values))


def thermal_report(write, policy, ranks, queue_depth, block_size):
    """``write_result | ai_storage.checkpoint_io.thermal_report(policy, ranks, depth, block_size)``."""
    if not isinstance(write, dict):
        raise AnsibleFilterError('thermal_report: %r is not a checkpoint_write result' % (write,))
    return _call('thermal_report', _thermal.evaluate, write, write.get('sampled_drives') or {}, policy, ranks,
                 queue_depth, block_size)


def thermal_line(drive, backoff=None):
    """``report.drives | map('ai_storage.checkpoint_io.thermal_line', report.backoff)``: one line per drive."""
    if not isinstance(drive, dict) or 'verdict' not in drive:
        raise AnsibleFilterError('thermal_line: %r is not a drive of thermal_report' % (drive,))
    return _thermal.drive_line(drive, backoff)


def thermal_record(report, apply_backoff, ranks, queue_depth, block_size):
    """``report | ai_storage.checkpoint_io.thermal_record(true, ranks, depth, block_size)``: the record's data."""
    return _call('thermal_record', _thermal.record_data, report, apply_backoff, ranks, queue_depth, block_size)


class FilterModule(object):
    """Thermal validation filters."""

    def filters(self):
        return {'thermal_inputs': thermal_inputs, 'thermal_report': thermal_report, 'thermal_line': thermal_line,
                'thermal_record': thermal_record}
