# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over repeated measurements (documented in before_after.yml beside this file); the logic is in
module_utils/common/repeats.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import repeats as _repeats


def before_after(before, after, same_settings=False, noise_floor=_repeats.NOISE_FLOOR):
    """``before_runs | ai_storage.checkpoint_io.before_after(after_runs, same)``: the verdict of a before/after."""
    try:
        return _repeats.compare(before, after, bool(same_settings), float(noise_floor))
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('before_after: %s' % exc)


def repeats_summary(values):
    """``runs | map(attribute='p99_ns') | ai_storage.checkpoint_io.repeats_summary``: {median, min, max, n, spread}
    of the numbers (None entries, runs that measured nothing, are left out; all None gives None)."""
    try:
        numbers = [value for value in values if value is not None]
    except TypeError:
        raise AnsibleFilterError('repeats_summary: %r is not a list of numbers' % (values,))
    if not numbers:
        return None
    try:
        return _repeats.summary(numbers, 'repeats_summary')
    except ValueError as exc:
        raise AnsibleFilterError('repeats_summary: %s' % exc)


def same_settings(before, after):
    """``before | ai_storage.checkpoint_io.same_settings(after)``: whether the two sides ran with the same settings."""
    try:
        return _repeats.same_settings(before, after)
    except ValueError as exc:
        raise AnsibleFilterError('same_settings: %s' % exc)


class FilterModule(object):
    """Before/after verdicts over repeats."""

    def filters(self):
        return {'before_after': before_after, 'repeats_summary': repeats_summary, 'same_settings': same_settings}
